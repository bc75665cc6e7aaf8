import { type DbDefinition, platformEntities } from '@svc/platform/service';
import { FileBatch, StoredFile } from './files/file.entity.js';
import { migrations } from './migrations/index.js';

export const dbDefinition: DbDefinition = { schema: 'files', entities: [...platformEntities, StoredFile, FileBatch], migrations };

export { poolOf } from '@svc/platform/db/native';
