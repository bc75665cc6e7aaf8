import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migration20261122052413__initial } from './Migration20261122052413__initial.js';
import { Migration20261125123851_chat } from './Migration20261125123851_chat.js';
import { Migration20261126105103 } from './Migration20261126105103.js';

/** Committed migrations in the order they run. `npm run migration:create` writes new ones here. */
export const migrations: Constructor<Migration>[] = [
  Migration20261122052413__initial,
  Migration20261125123851_chat,
  Migration20261126105103,
];
