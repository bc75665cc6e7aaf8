/** Marketing rule 7 (PUT /leads/{id}): sent fields correct the current acquisition; null or blank clears. */
import type { MarketingAcquisition, MeasurementConsent } from './acquisition.entity.js';
import {
  type AcquisitionDraft,
  agreedConsent,
  CLICK_ID_FIELDS,
  cleanText,
  conversionPageUrl,
  type MarketingInput,
  readConversionUrl,
  type StoredTrackingField,
  SVC_FIELDS,
  sanitizeConversionUrl,
  type TrackingField,
  type TrackingValues,
  UTM_FIELDS,
  UTM_TO_SVC,
  type UtmField,
} from './tracking.js';

const STORED: StoredTrackingField[] = [...SVC_FIELDS, ...UTM_FIELDS, ...CLICK_ID_FIELDS, 'utm_medium'];

const camel = (f: string) => f.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

export function draftOf(a: MarketingAcquisition | null): AcquisitionDraft {
  const values = {} as TrackingValues;
  const row = (a ?? {}) as Record<string, unknown>;
  for (const f of STORED) values[f] = (row[camel(f)] as string | null | undefined) ?? null;
  return {
    ...values,
    url_conversion: a?.urlConversion ?? null,
    conversion_url_full: a?.conversionUrlFull ?? null,
    measurement_consent: (a?.measurementConsent as MeasurementConsent | null | undefined) ?? null,
  };
}

export interface Correction {
  /** The consent decision the request states (alias or URL), null when it states none. */
  decision: MeasurementConsent | null;
  /** Null when nothing tracking-related was sent (rule 6). */
  draft: AcquisitionDraft | null;
  /** Whether an origin input (svc_code, svc_source, utm_source, or the URL) was sent: the origin is resolved again. */
  originTouched: boolean;
  sensitive: string[];
}

/** A consent divergence between the alias and the URL is a 400. */
export function correctAcquisition(
  marketing: MarketingInput | null | undefined,
  current: MarketingAcquisition | null,
  leadConsent: MeasurementConsent,
): Correction {
  if (!marketing) return { decision: null, draft: null, originTouched: false, sensitive: [] };
  const sent = new Map<TrackingField | 'url_conversion', string | null>();
  for (const f of [...SVC_FIELDS, ...UTM_FIELDS, ...CLICK_ID_FIELDS, 'url_conversion'] as const) {
    if (marketing[f] !== undefined) sent.set(f, cleanText(marketing[f]) ?? null);
  }
  const aliasText = cleanText(marketing.measurement_consent);
  const alias = aliasText as MeasurementConsent | undefined;
  const url = sent.get('url_conversion') ?? null;
  const reading = url ? readConversionUrl(url) : null;
  const decision = agreedConsent({ alias, url: reading?.consent });
  if (sent.size === 0) return { decision, draft: null, originTouched: false, sensitive: [] };

  const draft = draftOf(current);
  for (const [f, v] of sent) if (f !== 'url_conversion') draft[f] = v;
  for (const [utm, svc] of Object.entries(UTM_TO_SVC) as [UtmField, (typeof SVC_FIELDS)[number]][]) {
    const v = sent.get(utm);
    if (v && !sent.has(svc)) draft[svc] = v;
  }
  const term = sent.get('utm_term');
  if (term && !sent.has('utm_search_term')) draft.utm_search_term = term;
  if (sent.has('url_conversion')) {
    if (url && reading) {
      for (const [param, value] of Object.entries(reading.params) as [StoredTrackingField, string][]) {
        if (draft[param] === null && !sent.has(param as TrackingField)) draft[param] = value;
      }
      for (const [utm, svc] of Object.entries(UTM_TO_SVC) as [UtmField, (typeof SVC_FIELDS)[number]][]) {
        if (draft[svc] === null && !sent.has(svc) && reading.params[utm]) draft[svc] = reading.params[utm] ?? null;
      }
      if (draft.utm_search_term === null && !sent.has('utm_search_term')) draft.utm_search_term = reading.params.utm_term ?? null;
      draft.utm_medium = reading.params.utm_medium ?? null;
      draft.url_conversion = conversionPageUrl(url);
      draft.conversion_url_full = sanitizeConversionUrl(url, decision ?? leadConsent);
    } else {
      draft.url_conversion = null;
      draft.conversion_url_full = null;
    }
  }
  if (decision) draft.measurement_consent = decision;
  const hasValue = STORED.some((f) => draft[f] !== null) || draft.url_conversion !== null;
  const originTouched = ['svc_code', 'svc_source', 'utm_source', 'url_conversion'].some((f) => sent.has(f as TrackingField));
  const sensitive = url ? [...new Set([url, draft.conversion_url_full ?? url])] : [];
  if (!hasValue && !current) return { decision, draft: null, originTouched: false, sensitive };
  return { decision, draft, originTouched, sensitive };
}
