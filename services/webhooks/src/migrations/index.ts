import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migration20261122052335__initial } from './Migration20261122052335__initial.js';
import { Migration20261122055549 } from './Migration20261122055549.js';
import { Migration20261122065950 } from './Migration20261122065950.js';
import { Migration20261122081502 } from './Migration20261122081502.js';
import { Migration20261126101846_subscriber_webhooks } from './Migration20261126101846_subscriber_webhooks.js';
import { Migration20261126103954 } from './Migration20261126103954.js';
import { Migration20261126111155_traceparent } from './Migration20261126111155_traceparent.js';
import { Migration20261127000500_body_lz4 } from './Migration20261127000500_body_lz4.js';

/** Committed migrations in the order they run. `npm run migration:create` writes new ones here. */
export const migrations: Constructor<Migration>[] = [
  Migration20261122052335__initial,
  Migration20261122055549,
  Migration20261122065950,
  Migration20261122081502,
  Migration20261126101846_subscriber_webhooks,
  Migration20261126103954,
  Migration20261126111155_traceparent,
  Migration20261127000500_body_lz4,
];
