import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migration20261122052416__initial } from './Migration20261122052416__initial.js';
import { Migration20261125123859__files } from './Migration20261125123859__files.js';
import { Migration20261125155034__file_purge } from './Migration20261125155034__file_purge.js';
import { Migration20261126111151_traceparent } from './Migration20261126111151_traceparent.js';

/** Committed migrations in the order they run. `npm run migration:create` writes new ones here. */
export const migrations: Constructor<Migration>[] = [
  Migration20261122052416__initial,
  Migration20261125123859__files,
  Migration20261125155034__file_purge,
  Migration20261126111151_traceparent,
];
