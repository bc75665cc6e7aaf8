import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migration20261122052023__initial } from './Migration20261122052023__initial.js';
import { Migration20261122063300__marketing_acquisitions } from './Migration20261122063300__marketing_acquisitions.js';
import { Migration20261122080821__lead_views_count } from './Migration20261122080821__lead_views_count.js';
import { Migration20261122081740__lead_relations } from './Migration20261122081740__lead_relations.js';
import { Migration20261122081900__lead_view_queue } from './Migration20261122081900__lead_view_queue.js';
import { Migration20261122083729__deals } from './Migration20261122083729__deals.js';
import { Migration20261122095434__deal_reasons } from './Migration20261122095434__deal_reasons.js';
import { Migration20261122095519__deal_relations } from './Migration20261122095519__deal_relations.js';
import { Migration20261122103656__person_contacts_normalized } from './Migration20261122103656__person_contacts_normalized.js';
import { Migration20261122104337__lead_detail_versions } from './Migration20261122104337__lead_detail_versions.js';
import { Migration20261125123751__deliveries } from './Migration20261125123751__deliveries.js';
import { Migration20261125124548__contracts } from './Migration20261125124548__contracts.js';
import { Migration20261125125318__satisfaction } from './Migration20261125125318__satisfaction.js';
import { Migration20261125132316__files_and_proposals } from './Migration20261125132316__files_and_proposals.js';
import { Migration20261125140229__attempt_owner } from './Migration20261125140229__attempt_owner.js';
import { Migration20261126101707__customers } from './Migration20261126101707__customers.js';
import { Migration20261126103000__external_ids } from './Migration20261126103000__external_ids.js';
import { Migration20261126104700__idempotency_receipts } from './Migration20261126104700__idempotency_receipts.js';

/** Committed migrations in the order they run. `npm run migration:create` writes new ones here. */
export const migrations: Constructor<Migration>[] = [
  Migration20261122052023__initial,
  Migration20261122063300__marketing_acquisitions,
  Migration20261122080821__lead_views_count,
  Migration20261122081740__lead_relations,
  Migration20261122081900__lead_view_queue,
  Migration20261122083729__deals,
  Migration20261122095434__deal_reasons,
  Migration20261122095519__deal_relations,
  Migration20261122103656__person_contacts_normalized,
  Migration20261122104337__lead_detail_versions,
  Migration20261125123751__deliveries,
  Migration20261125124548__contracts,
  Migration20261125125318__satisfaction,
  Migration20261125132316__files_and_proposals,
  Migration20261125140229__attempt_owner,
  Migration20261126101707__customers,
  Migration20261126103000__external_ids,
  Migration20261126104700__idempotency_receipts,
];
