import { inTransaction } from '@svc/platform/db/native';
import { invalidField, isUuid } from '@svc/platform/errors';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { type LeadSource, NAMED_ITEM_NAME_MAX, type NamedItem, type Tracker } from '../catalog/catalog.entity.js';
import * as catalog from '../catalog/catalog.store.js';
import { leadSourceNameFor } from './tracking.js';

/** Where origins are read and created. */
export type OriginDb = Pool;

export interface OriginRequest {
  /** `crm_lead_source_id` of the body: the only manual origin. */
  crmLeadSourceId?: string | null | undefined;
  /** The acquisition's svc_code (sent or read from the URL). */
  svcCode?: string | null | undefined;
  /** svc_source, else utm_source, of the acquisition. */
  sourceName?: string | null | undefined;
}

export interface Origin {
  leadSource: LeadSource | null;
  /** The active tracker svc_code matched; linked to the acquisition even when crm_lead_source_id wins. */
  tracker: Tracker | null;
}

/** `%`, `_` and `\` match themselves in an ILIKE pattern. */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The company's row of this name, compared without letter case (the oldest when several match), or a new one,
 * committed in its own transaction: a transaction advisory lock per company, kind and name makes concurrent
 * creations share one row.
 */
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

/** The company's lead source of this name, or a new one (origin by svc_source / utm_source, rule 2). */
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

/**
 * The company's conversion tool of this name (`svc_conversion_tool`, sent or read from `url_conversion`), or a new
 * one in the company's named items (kind `conversion_tool`, listed by the admin API): "a conversion tool created
 * when needed" of POST /deals, and of POST /leads alike (decision 0048). The acquisition keeps the name as sent.
 */
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

/**
 * Origin resolution (POST /leads rule 2): crm_lead_source_id when sent (a 400 when it is not one of the
 * company's); else the lead source of the active tracker svc_code names; else the source name finds or
 * creates one ("IG" in any case is Instagram); else none.
 */
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
