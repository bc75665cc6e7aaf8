import { z } from 'zod';
import { MEASUREMENT_CONSENTS } from './acquisition.entity.js';
import { type MarketingInput, type StoredTrackingField, TRACKING_MAX_LENGTH } from './tracking.js';

const text = (field: StoredTrackingField | 'url_conversion') => {
  const max = TRACKING_MAX_LENGTH[field];
  return z.string({ message: 'must be a string' }).trim().max(max, `must be at most ${max} characters`).nullable().optional();
};

/** `marketing` of POST /leads: strict, trimmed and capped here; blank values are ignored later (rule 1). */
export const marketingBody = z.strictObject({
  svc_code: text('svc_code'),
  svc_source: text('svc_source'),
  svc_campaign: text('svc_campaign'),
  svc_ad_set: text('svc_ad_set'),
  svc_content: text('svc_content'),
  svc_displayed_on: text('svc_displayed_on'),
  svc_conversion_tool: text('svc_conversion_tool'),
  svc_creative: text('svc_creative'),
  gclid: text('gclid'),
  fbclid: text('fbclid'),
  url_conversion: text('url_conversion'),
  utm_search_term: text('utm_search_term'),
  utm_source: text('utm_source'),
  utm_campaign: text('utm_campaign'),
  utm_ad_set: text('utm_ad_set'),
  utm_content: text('utm_content'),
  utm_term: text('utm_term'),
  utm_display_on: text('utm_display_on'),
  measurement_consent: z
    .string({ message: 'must be GRANTED, DENIED or UNSPECIFIED' })
    .trim()
    .refine((v) => v === '' || (MEASUREMENT_CONSENTS as readonly string[]).includes(v), 'must be GRANTED, DENIED or UNSPECIFIED')
    .nullable()
    .optional(),
}) satisfies z.ZodType<MarketingInput>;
