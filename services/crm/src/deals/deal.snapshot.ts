import { iso } from '@svc/platform/http/json';
import type { NamedItem } from '../catalog/catalog.entity.js';
import { leadSnapshot } from '../leads/lead.snapshot.js';
import type { SalesRelations } from '../sales/sales.snapshot.js';
import { namedSummary } from '../sales/sales.summaries.js';
import type { Deal } from './deal.entity.js';

export interface DealRelations extends SalesRelations {
  gainReasons: NamedItem[];
  lead: { id: string; code: number; title: string } | null;
}

export type DealSnapshot = ReturnType<typeof dealSnapshot>;

/** DealSnapshot (spec "Deal payloads"), built on leadSnapshot so the shared fields cannot drift. */
export function dealSnapshot(deal: Deal, rel: DealRelations) {
  const { lead_source, deals: _deals, ...shared } = leadSnapshot(deal, rel);
  return {
    ...shared,
    deal_source: lead_source,
    lead: rel.lead,
    crm_gain_reason: rel.gainReasons[0] ? namedSummary(rel.gainReasons[0]) : null,
    crm_gain_reasons: rel.gainReasons.map(namedSummary),
    won_reason_description: deal.wonReasonDescription ?? null,
    expected_close_date: iso(deal.expectedCloseDate),
    temperature: deal.temperature ?? null,
  };
}
