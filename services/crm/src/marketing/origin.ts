import type { EntityManager } from '@svc/platform/db/orm';
import { invalidField, isUuid } from '@svc/platform/errors';
import { v7 as uuidv7 } from 'uuid';
import { LeadSource, NAMED_ITEM_NAME_MAX, NamedItem, Tracker } from '../catalog/catalog.entity.js';
import { leadSourceNameFor } from './tracking.js';

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
 * committed in its own transaction (a savepoint inside the caller's): a transaction advisory lock per company, kind
 * and name makes concurrent creations share one row.
 */
function findOrCreateByName<T extends object>(
  em: EntityManager,
  lockKey: string,
  find: (tx: EntityManager) => Promise<T | null>,
  make: (tx: EntityManager) => T,
): Promise<T> {
  return em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [lockKey]);
    const found = await find(tx);
    if (found) return found;
    const created = make(tx);
    await tx.flush();
    return created;
  });
}

/** The company's lead source of this name, or a new one (origin by svc_source / utm_source, rule 2). */
export function findOrCreateLeadSource(em: EntityManager, companyId: string, sourceName: string): Promise<LeadSource> {
  const name = leadSourceNameFor(sourceName);
  return findOrCreateByName(
    em,
    `lead_source:${companyId}:${name.toLowerCase()}`,
    (tx) => tx.findOne(LeadSource, { companyId, name: { $ilike: likeLiteral(name) } }, { orderBy: { id: 'asc' } }),
    (tx) => tx.create(LeadSource, { id: uuidv7(), companyId, name, logo: null }),
  );
}

/**
 * The company's conversion tool of this name (`svc_conversion_tool`, sent or read from `url_conversion`), or a new
 * one in the company's named items (kind `conversion_tool`, listed by the admin API): "a conversion tool created
 * when needed" of POST /deals, and of POST /leads alike (decision 0048). The acquisition keeps the name as sent.
 */
export function findOrCreateConversionTool(em: EntityManager, companyId: string, toolName: string): Promise<NamedItem> {
  const name = toolName.trim().slice(0, NAMED_ITEM_NAME_MAX);
  return findOrCreateByName(
    em,
    `conversion_tool:${companyId}:${name.toLowerCase()}`,
    (tx) => tx.findOne(NamedItem, { companyId, kind: 'conversion_tool', name: { $ilike: likeLiteral(name) } }, { orderBy: { id: 'asc' } }),
    (tx) => tx.create(NamedItem, { id: uuidv7(), companyId, kind: 'conversion_tool', name }),
  );
}

/**
 * Origin resolution (POST /leads rule 2): crm_lead_source_id when sent (a 400 when it is not one of the
 * company's); else the lead source of the active tracker svc_code names; else the source name finds or
 * creates one ("IG" in any case is Instagram); else none.
 */
export async function resolveOrigin(em: EntityManager, companyId: string, request: OriginRequest): Promise<Origin> {
  let manual: LeadSource | null = null;
  if (request.crmLeadSourceId) {
    manual = isUuid(request.crmLeadSourceId) ? await em.findOne(LeadSource, { id: request.crmLeadSourceId, companyId }) : null;
    if (!manual) throw invalidField('crm_lead_source_id', 'no such lead source in the company');
  }
  const tracker = request.svcCode ? await em.findOne(Tracker, { companyId, code: request.svcCode, active: true }) : null;
  if (manual) return { leadSource: manual, tracker };
  if (tracker) return { leadSource: await em.findOneOrFail(LeadSource, { id: tracker.leadSourceId, companyId }), tracker };
  if (request.sourceName) return { leadSource: await findOrCreateLeadSource(em, companyId, request.sourceName), tracker: null };
  return { leadSource: null, tracker: null };
}
