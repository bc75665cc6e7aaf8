import { nativePool } from '@svc/platform/db/native';
import type { Orm } from '@svc/platform/db/orm';
import { type DbDefinition, platformEntities } from '@svc/platform/service';
import { FileBatch, StoredFile } from './files/file.entity.js';
import { migrations } from './migrations/index.js';

export const dbDefinition: DbDefinition = { schema: 'files', entities: [...platformEntities, StoredFile, FileBatch], migrations };

export const poolOf = (orm: Orm) => () => nativePool(orm);
