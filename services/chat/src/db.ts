import type { DbDefinition } from '@svc/platform/service';
import { chatEntities } from './entities.js';
import { migrations } from './migrations/index.js';

export const dbDefinition: DbDefinition = { schema: 'chat', entities: chatEntities, migrations };

/** The pg pool under the service's MikroORM, which the stores are handed (decision 0201). */
export { poolOf } from '@svc/platform/db/native';
