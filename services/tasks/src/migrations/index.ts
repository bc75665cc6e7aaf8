import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migration20261122052410__initial } from './Migration20261122052410__initial.js';
import { Migration20261122081343__tasks } from './Migration20261122081343__tasks.js';
import { Migration20261126111148_traceparent } from './Migration20261126111148_traceparent.js';

/** Committed migrations in the order they run. `npm run migration:create` writes new ones here. */
export const migrations: Constructor<Migration>[] = [
  Migration20261122052410__initial,
  Migration20261122081343__tasks,
  Migration20261126111148_traceparent,
];
