import type { RecordKind } from '../sales/sales.kind.js';
import type { SalesRelations } from '../sales/sales.snapshot.js';
import type { Lead } from './lead.entity.js';
import type { CreateLeadBody, UpdateLeadBody } from './lead.schema.js';
import { type LeadSnapshot, leadSnapshot } from './lead.snapshot.js';

export const leadKind: RecordKind<Lead, SalesRelations, LeadSnapshot, CreateLeadBody, UpdateLeadBody> = {
  kind: 'lead',
  label: 'Lead',
  snapshot: leadSnapshot,
  newRecord: (shared) => ({ ...shared, viewsCount: 0, detailVersion: 0 }),
  newRelations: (shared) => shared,
  /** LeadCreatedPayload: the lead, and the qualification when the body sent one (previous values null). */
  createdPayload(snapshot, lead, body) {
    if (body.quality_rating === undefined) return { lead: snapshot };
    return {
      lead: snapshot,
      previous_quality: null,
      previous_quality_reason: null,
      new_quality: lead.qualityRating,
      new_quality_reason: lead.qualityReason,
    };
  },
};
