import { conflict } from '@svc/platform/errors';
import { type DbDefinition, platformEntities } from '@svc/platform/service';
import type { Pool, PoolClient } from 'pg';
import { CustomField, CustomFieldOption, CustomFieldValue, LeadSource, NamedItem, Tag, Tracker } from './catalog/catalog.entity.js';
import { Company, CompanySequence, IntegrationKey, User } from './companies/company.entity.js';
import { Organization, Person, PersonContact } from './contacts/contact.entity.js';
import { Contract, ContractRenewal } from './contracts/contract.entity.js';
import { Customer } from './customers/customer.entity.js';
import { Deal, DealGainReason, DealIdempotencyKey, DealRelationEntities } from './deals/deal.entity.js';
import { Delivery, DeliveryPipeline, DeliveryStage } from './deliveries/delivery.entity.js';
import { RecordFileCount } from './files/file-count.entity.js';
import { DetailCatalogVersion, Lead, LeadIdempotencyKey, LeadRelationEntities, LeadView, LeadViewQueued } from './leads/lead.entity.js';
import { MarketingAcquisition } from './marketing/acquisition.entity.js';
import { migrations } from './migrations/index.js';
import { Pipeline, Stage } from './pipelines/pipeline.entity.js';
import { Proposal, ProposalAttachment, ProposalDocument, ProposalItem } from './proposals/proposal.entity.js';
import { SatisfactionLink, SatisfactionSubmission } from './satisfaction/satisfaction.entity.js';

export const dbDefinition: DbDefinition = {
  schema: 'crm',
  entities: [
    ...platformEntities,
    Company,
    User,
    IntegrationKey,
    CompanySequence,
    Pipeline,
    Stage,
    Tag,
    CustomField,
    CustomFieldOption,
    CustomFieldValue,
    LeadSource,
    Tracker,
    NamedItem,
    Person,
    PersonContact,
    Organization,
    Lead,
    LeadView,
    LeadViewQueued,
    ...Object.values(LeadRelationEntities),
    LeadIdempotencyKey,
    DetailCatalogVersion,
    MarketingAcquisition,
    Deal,
    DealIdempotencyKey,
    ...Object.values(DealRelationEntities),
    DealGainReason,
    RecordFileCount,
    Proposal,
    ProposalItem,
    ProposalDocument,
    ProposalAttachment,
    DeliveryPipeline,
    DeliveryStage,
    Delivery,
    Contract,
    ContractRenewal,
    SatisfactionLink,
    SatisfactionSubmission,
    Customer,
  ],
  migrations,
};

/** What a store's functions run on: the pool, or the client of a transaction. */
export type Db = Pool | PoolClient;

export { type PoolOf, poolOf } from '@svc/platform/db/native';

const UNIQUE_VIOLATION = '23505';

/** Runs `work`; a unique violation it meets becomes a 409 with `message` (the answer the ORM's exception had). */
export async function conflictOnUnique<T>(work: () => Promise<T>, message: string): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) throw conflict(message);
    throw err;
  }
}
