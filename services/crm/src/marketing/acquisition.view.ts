import type { LeadSource } from '../catalog/catalog.entity.js';
import type { MarketingAcquisition, MeasurementConsent } from './acquisition.entity.js';

export const leadSourceSummary = (s: LeadSource | null | undefined) => (s ? { id: s.id, name: s.name, logo: s.logo } : null);

export const effectiveLeadSourceId = (
  storedLeadSourceId: string | null | undefined,
  latest: Pick<MarketingAcquisition, 'leadSourceId'> | null,
): string | null => latest?.leadSourceId ?? storedLeadSourceId ?? null;

/** `marketing_lead_source`: the latest active acquisition with the contract's fields (its spelling `campaing_name`). */
export function marketingLeadSourceView(a: MarketingAcquisition | null, leadSources: Map<string, LeadSource>) {
  if (!a) return null;
  return {
    id: a.id,
    utm_search_term: a.utmSearchTerm,
    utm_medium: a.utmMedium,
    lead_source: leadSourceSummary(a.leadSourceId ? leadSources.get(a.leadSourceId) : null),
    url_conversion: a.urlConversion,
    campaing_name: a.svcCampaign,
    ad_set_name: a.svcAdSet,
    content_name: a.svcContent,
    displayed_on_name: a.svcDisplayedOn,
    conversion_tool_name: a.svcConversionTool,
    creative: a.svcCreative ? { id: null, value: a.svcCreative, creative_uri: null } : null,
    source_url: null,
    headline: null,
    ad_body: null,
    media_type: null,
    ads_clid_id: null,
    gclid: a.gclid,
    fbclid: a.fbclid,
    fbc: null,
    fbp: null,
    conversion_url_full: a.conversionUrlFull,
    measurement_consent: (a.measurementConsent as MeasurementConsent | null) ?? null,
  };
}
