import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migration20261122052023__initial } from './Migration20261122052023__initial.js';

/** Committed migrations in the order they run. `npm run migration:create` writes new ones here. */
export const migrations: Constructor<Migration>[] = [Migration20261122052023__initial];
