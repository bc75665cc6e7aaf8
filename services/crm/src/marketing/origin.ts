import { inTransaction } from '@svc/platform/db/native';
import { invalidField, isUuid } from '@svc/platform/errors';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { type LeadSource, NAMED_ITEM_NAME_MAX, type NamedItem, type Tracker } from '../catalog/catalog.entity.js';
import * as catalog from '../catalog/catalog.store.js';
import { leadSourceNameFor } from './tracking.js';

export type OriginDb = Pool;

export interface OriginRequest {
  /** `crm_lead_source_id` of the body: the only manual origin. */
  crmLeadSourceId?: string | null | undefined;
  svcCode?: string | null | undefined;
  sourceName?: string | null | undefined;
}

export interface Origin {
  leadSource: LeadSource | null;
  /** The active tracker svc_code matched; linked to the acquisition even when crm_lead_source_id wins. */
  tracker: Tracker | null;
}

/** `%`, `_` and `\` match themselves in an ILIKE pattern. */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Found without letter case, or created in its own transaction under an advisory lock so concurrent creations share a row. */
function findOrCreateByName<T>(
  db: OriginDb,
  lockKey: string,
  find: (tx: Pool | PoolClient) => Promise<T | null>,
  make: (tx: PoolClient) => Promise<T>,
): Promise<T> {
  return inTransaction(db, async (tx) => {
    await catalog.lockName(tx, lockKey);
    return (await find(tx)) ?? make(tx);
  });
}

export function findOrCreateLeadSource(db: OriginDb, companyId: string, sourceName: string): Promise<LeadSource> {
  const name = leadSourceNameFor(sourceName);
  return findOrCreateByName(
    db,
    `lead_source:${companyId}:${name.toLowerCase()}`,
    (tx) => catalog.leadSourceNamed(tx, companyId, likeLiteral(name)),
    async (tx) => {
      const source: LeadSource = { id: uuidv7(), companyId, name, logo: null };
      await catalog.insertLeadSource(tx, source);
      return source;
    },
  );
}

/** The company's conversion tool of this name, created when needed (decision 0048). */
export function findOrCreateConversionTool(db: OriginDb, companyId: string, toolName: string): Promise<NamedItem> {
  const name = toolName.trim().slice(0, NAMED_ITEM_NAME_MAX);
  return findOrCreateByName(
    db,
    `conversion_tool:${companyId}:${name.toLowerCase()}`,
    (tx) => catalog.namedItemNamed(tx, companyId, 'conversion_tool', likeLiteral(name)),
    async (tx) => {
      const item: NamedItem = { id: uuidv7(), companyId, kind: 'conversion_tool', name };
      await catalog.insertNamedItem(tx, item);
      return item;
    },
  );
}

/** Origin (rule 2): crm_lead_source_id (a 400 when foreign), else the tracker's, else by source name. */
export async function resolveOrigin(pool: OriginDb, companyId: string, request: OriginRequest): Promise<Origin> {
  let manual: LeadSource | null = null;
  if (request.crmLeadSourceId) {
    manual = isUuid(request.crmLeadSourceId) ? await catalog.findLeadSource(pool, companyId, request.crmLeadSourceId) : null;
    if (!manual) throw invalidField('crm_lead_source_id', 'no such lead source in the company');
  }
  const tracker = request.svcCode ? await catalog.activeTracker(pool, companyId, request.svcCode) : null;
  if (manual) return { leadSource: manual, tracker };
  if (tracker) {
    const source = await catalog.findLeadSource(pool, companyId, tracker.leadSourceId);
    if (!source) throw new Error(`tracker ${tracker.id} names a lead source that does not exist`);
    return { leadSource: source, tracker };
  }
  if (request.sourceName) return { leadSource: await findOrCreateLeadSource(pool, companyId, request.sourceName), tracker: null };
  return { leadSource: null, tracker: null };
}
