import { v7 as uuidv7 } from 'uuid';
import type { LeadSource } from '../catalog/catalog.entity.js';
import type { AcquiredKind, MarketingAcquisition, MeasurementConsent } from './acquisition.entity.js';
import type { Origin } from './origin.js';
import type { AcquisitionDraft } from './tracking.js';

export function acquisitionOf(
  kind: AcquiredKind,
  record: { id: string; companyId: string },
  draft: AcquisitionDraft,
  origin: Origin,
  at: Date,
): MarketingAcquisition {
  return {
    id: uuidv7(),
    companyId: record.companyId,
    leadId: kind === 'lead' ? record.id : null,
    dealId: kind === 'deal' ? record.id : null,
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
  };
}

export interface LeadMarketing {
  latest: MarketingAcquisition | null;
  /** The decision of the most recent active snapshot that has one (a snapshot without one does not shadow it). */
  latestDecision: MeasurementConsent | null;
  leadSources: Map<string, LeadSource>;
}
