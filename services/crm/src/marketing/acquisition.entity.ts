import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** A record's measurement consent (spec "Measurement consent"): canonical on the record, else its acquisitions'. */
export const MEASUREMENT_CONSENTS = ['GRANTED', 'DENIED', 'UNSPECIFIED'] as const;
export type MeasurementConsent = (typeof MEASUREMENT_CONSENTS)[number];

export type AcquiredKind = 'lead' | 'deal';

/** One acquisition snapshot of a lead or a deal; the latest active one is the record's effective origin. */
export const MarketingAcquisition = defineEntity({
  name: 'MarketingAcquisition',
  tableName: 'marketing_acquisitions',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    leadId: p.uuid().nullable(),
    dealId: p.uuid().nullable(),
    active: p.boolean(),
    createdAt: p.datetime(),
    /** The active tracker svc_code matched, kept even when crm_lead_source_id chose the origin. */
    trackerId: p.uuid().nullable(),
    /** The origin resolved for this acquisition (crm_lead_source_id, else the tracker's, else by source name). */
    leadSourceId: p.uuid().nullable(),
    svcCode: p.string().length(200).nullable(),
    svcSource: p.string().length(200).nullable(),
    svcCampaign: p.string().length(255).nullable(),
    svcAdSet: p.string().length(255).nullable(),
    svcContent: p.string().length(255).nullable(),
    svcDisplayedOn: p.string().length(255).nullable(),
    svcConversionTool: p.string().length(255).nullable(),
    svcCreative: p.string().length(255).nullable(),
    gclid: p.string().length(500).nullable(),
    fbclid: p.string().length(500).nullable(),
    utmSearchTerm: p.string().length(255).nullable(),
    utmSource: p.string().length(200).nullable(),
    utmMedium: p.string().length(255).nullable(),
    utmCampaign: p.string().length(255).nullable(),
    utmAdSet: p.string().length(255).nullable(),
    utmContent: p.string().length(255).nullable(),
    utmTerm: p.string().length(255).nullable(),
    utmDisplayOn: p.string().length(255).nullable(),
    /** The page address: no credentials, query or fragment. */
    urlConversion: p.text().nullable(),
    /** The full URL, sanitized: without GRANTED, no obref parameter and no fragment. */
    conversionUrlFull: p.text().nullable(),
    measurementConsent: p.string().length(20).nullable(),
  },
  indexes: [
    { name: 'marketing_acquisitions_lead_created_idx', properties: ['leadId', 'createdAt'] },
    { name: 'marketing_acquisitions_deal_created_idx', properties: ['dealId', 'createdAt'] },
  ],
  checks: [{ name: 'marketing_acquisitions_one_record_check', expression: 'num_nonnulls(lead_id, deal_id) = 1' }],
});
export type MarketingAcquisition = InferEntity<typeof MarketingAcquisition>;
