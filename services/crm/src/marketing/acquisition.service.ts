import type { EntityManager } from '@svc/platform/db/orm';
import { v7 as uuidv7 } from 'uuid';
import { LeadSource } from '../catalog/catalog.entity.js';
import type { Lead, MeasurementConsent } from '../leads/lead.entity.js';
import { MarketingAcquisition } from './acquisition.entity.js';
import type { Origin } from './origin.js';
import type { AcquisitionDraft } from './tracking.js';

/** Writes an acquisition snapshot of a lead (in the caller's transaction; flushed with it). */
export function recordAcquisition(em: EntityManager, lead: Lead, draft: AcquisitionDraft, origin: Origin, at: Date): MarketingAcquisition {
  return em.create(MarketingAcquisition, {
    id: uuidv7(),
    companyId: lead.companyId,
    leadId: lead.id,
    active: true,
    createdAt: at,
    trackerId: origin.tracker?.id ?? null,
    leadSourceId: origin.leadSource?.id ?? null,
    svcCode: draft.svc_code,
    svcSource: draft.svc_source,
    svcCampaign: draft.svc_campaign,
    svcAdSet: draft.svc_ad_set,
    svcContent: draft.svc_content,
    svcDisplayedOn: draft.svc_displayed_on,
    svcConversionTool: draft.svc_conversion_tool,
    svcCreative: draft.svc_creative,
    gclid: draft.gclid,
    fbclid: draft.fbclid,
    utmSearchTerm: draft.utm_search_term,
    utmSource: draft.utm_source,
    utmMedium: draft.utm_medium,
    utmCampaign: draft.utm_campaign,
    utmAdSet: draft.utm_ad_set,
    utmContent: draft.utm_content,
    utmTerm: draft.utm_term,
    utmDisplayOn: draft.utm_display_on,
    urlConversion: draft.url_conversion,
    conversionUrlFull: draft.conversion_url_full,
    measurementConsent: draft.measurement_consent,
  });
}

/** What a lead's responses need from its acquisitions. */
export interface LeadMarketing {
  /** The most recent active acquisition snapshot. */
  latest: MarketingAcquisition | null;
  /** The decision of the most recent active snapshot that has one (a snapshot without one does not shadow it). */
  latestDecision: MeasurementConsent | null;
  /** The lead sources the snapshot and the lead name, by id. */
  leadSources: Map<string, LeadSource>;
}

const newestFirst = { createdAt: 'desc', id: 'desc' } as const;

/**
 * Loads a lead's marketing view: one query for the latest active snapshot, one more only when the lead has
 * no canonical consent and that snapshot carries no decision, and one for the lead sources.
 */
export async function loadLeadMarketing(em: EntityManager, lead: Lead): Promise<LeadMarketing> {
  const where = { companyId: lead.companyId, leadId: lead.id, active: true };
  const latest = await em.findOne(MarketingAcquisition, where, { orderBy: newestFirst });
  let latestDecision = (latest?.measurementConsent as MeasurementConsent | null | undefined) ?? null;
  if (!lead.measurementConsent && latest && latestDecision === null) {
    const decided = await em.findOne(MarketingAcquisition, { ...where, measurementConsent: { $ne: null } }, { orderBy: newestFirst });
    latestDecision = (decided?.measurementConsent as MeasurementConsent | null | undefined) ?? null;
  }
  const ids = [...new Set([latest?.leadSourceId, lead.leadSourceId].filter((id): id is string => !!id))];
  const sources = ids.length ? await em.find(LeadSource, { companyId: lead.companyId, id: { $in: ids } }) : [];
  return { latest, latestDecision, leadSources: new Map(sources.map((s) => [s.id, s])) };
}
