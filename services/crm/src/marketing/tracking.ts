/** Marketing tracking of lead creation (spec rules 1 to 6) as pure functions, run before any write. */
import { invalidField } from '@svc/platform/errors';
import { MEASUREMENT_CONSENTS, type MeasurementConsent } from './acquisition.entity.js';

export const SVC_FIELDS = [
  'svc_code',
  'svc_source',
  'svc_campaign',
  'svc_ad_set',
  'svc_content',
  'svc_displayed_on',
  'svc_conversion_tool',
  'svc_creative',
] as const;
export const UTM_FIELDS = [
  'utm_search_term',
  'utm_source',
  'utm_campaign',
  'utm_ad_set',
  'utm_content',
  'utm_term',
  'utm_display_on',
] as const;
export const CLICK_ID_FIELDS = ['gclid', 'fbclid'] as const;

export type SvcField = (typeof SVC_FIELDS)[number];
export type UtmField = (typeof UTM_FIELDS)[number];
export type ClickIdField = (typeof CLICK_ID_FIELDS)[number];
export type TrackingField = SvcField | UtmField | ClickIdField;
/** What is stored: the input's fields plus utm_medium, which only a conversion URL carries. */
export type StoredTrackingField = TrackingField | 'utm_medium';

/** Longest accepted value per field after trimming; longer is a 400 naming the field. */
export const TRACKING_MAX_LENGTH: Record<StoredTrackingField | 'url_conversion', number> = {
  svc_code: 200,
  svc_source: 200,
  svc_campaign: 255,
  svc_ad_set: 255,
  svc_content: 255,
  svc_displayed_on: 255,
  svc_conversion_tool: 255,
  svc_creative: 255,
  utm_search_term: 255,
  utm_source: 200,
  utm_medium: 255,
  utm_campaign: 255,
  utm_ad_set: 255,
  utm_content: 255,
  utm_term: 255,
  utm_display_on: 255,
  gclid: 500,
  fbclid: 500,
  url_conversion: 4096,
};

/** Rule 2: the svc_* field each utm_* value fills when the svc_* field is not sent. */
export const UTM_TO_SVC: Partial<Record<UtmField, SvcField>> = {
  utm_source: 'svc_source',
  utm_campaign: 'svc_campaign',
  utm_ad_set: 'svc_ad_set',
  utm_content: 'svc_content',
  utm_display_on: 'svc_displayed_on',
};

/** Rule 3: the query parameters read from url_conversion (svc_creative is not among them; utm_medium is). */
export const URL_PARAMS = [
  'svc_code',
  'svc_source',
  'svc_campaign',
  'svc_ad_set',
  'svc_content',
  'svc_displayed_on',
  'svc_conversion_tool',
  ...UTM_FIELDS,
  'utm_medium',
  ...CLICK_ID_FIELDS,
] as const satisfies readonly StoredTrackingField[];
export type UrlParam = (typeof URL_PARAMS)[number];

export const CONSENT_PARAM = 'measurement_consent';
/** Removed from the stored full URL unless the consent is GRANTED (rule 5). */
export const OBREF_PARAM = 'obref';

export type MarketingInput = Partial<Record<TrackingField | 'url_conversion' | 'measurement_consent', string | null>>;

/** Rule 1: trimmed; empty, blank and null values count as not sent. */
export function cleanText(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

const isConsent = (v: string): v is MeasurementConsent => (MEASUREMENT_CONSENTS as readonly string[]).includes(v);

/** A URL consent: null when absent, UNSPECIFIED when unknown or ambiguous; compared trimmed, upper case. */
export function readUrlConsent(values: readonly string[]): MeasurementConsent | null {
  const given = new Set(values.map((v) => v.trim().toUpperCase()).filter((v) => v !== ''));
  if (given.size === 0) return null;
  if (given.size > 1) return 'UNSPECIFIED';
  const [only] = given;
  return only !== undefined && isConsent(only) ? only : 'UNSPECIFIED';
}

/** The value of a tracking parameter: equal repeats count once, divergent repeats are ambiguous and ignored. */
export function singleParamValue(values: readonly string[], maxLength: number): string | undefined {
  const given = new Set(values.map((v) => v.trim()).filter((v) => v !== ''));
  if (given.size !== 1) return undefined;
  const [only] = given;
  return only !== undefined && only.length <= maxLength ? only : undefined;
}

export interface ConversionUrlReading {
  wellFormed: boolean;
  params: Partial<Record<UrlParam, string>>;
  /** The URL's own consent (rule 4): null when it carries none, UNSPECIFIED when malformed or ambiguous. */
  consent: MeasurementConsent | null;
}

export function parseHttpUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
}

/** Rules 3 and 4: what url_conversion says. Percent-encoding and `+` are decoded as in a submitted form. */
export function readConversionUrl(text: string): ConversionUrlReading {
  const url = parseHttpUrl(text);
  if (!url) return { wellFormed: false, params: {}, consent: 'UNSPECIFIED' };
  const params: Partial<Record<UrlParam, string>> = {};
  for (const name of URL_PARAMS) {
    const value = singleParamValue(url.searchParams.getAll(name), TRACKING_MAX_LENGTH[name]);
    if (value !== undefined) params[name] = value;
  }
  return { wellFormed: true, params, consent: readUrlConsent(url.searchParams.getAll(CONSENT_PARAM)) };
}

function segmentName(segment: string): string {
  const raw = (segment.split('=', 1)[0] ?? '').replace(/\+/g, ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** A query string (without `?`) minus every segment named obref (any letter case, encoded or not). */
export function withoutObref(query: string): string {
  return query
    .split('&')
    .filter((segment) => segmentName(segment).trim().toLowerCase() !== OBREF_PARAM)
    .join('&');
}

function splitUrlText(text: string): { base: string; query: string | null; fragment: string | null } {
  const hash = text.indexOf('#');
  const beforeHash = hash === -1 ? text : text.slice(0, hash);
  const fragment = hash === -1 ? null : text.slice(hash + 1);
  const q = beforeHash.indexOf('?');
  return q === -1
    ? { base: beforeHash, query: null, fragment }
    : { base: beforeHash.slice(0, q), query: beforeHash.slice(q + 1), fragment };
}

/** conversion_url_full (rule 5): credentials always dropped; without GRANTED, obref and the fragment too. */
export function sanitizeConversionUrl(text: string, consent: MeasurementConsent): string {
  const url = parseHttpUrl(text);
  let base: string;
  let query: string | null;
  let fragment: string | null;
  if (url) {
    url.username = '';
    url.password = '';
    base = `${url.origin}${url.pathname}`;
    query = url.search ? url.search.slice(1) : null;
    fragment = url.hash ? url.hash.slice(1) : null;
  } else {
    ({ base, query, fragment } = splitUrlText(text));
  }
  if (consent !== 'GRANTED') {
    fragment = null;
    if (query !== null) query = withoutObref(query);
  }
  return `${base}${query ? `?${query}` : ''}${fragment !== null ? `#${fragment}` : ''}`;
}

/** url_conversion as stored and shown: the page address, without credentials, query or fragment. */
export function conversionPageUrl(text: string): string {
  const url = parseHttpUrl(text);
  return url ? `${url.origin}${url.pathname}` : splitUrlText(text).base;
}

export interface ConsentSources {
  topLevel?: MeasurementConsent | undefined;
  /** The legacy alias `marketing.measurement_consent`. */
  alias?: MeasurementConsent | undefined;
  url?: MeasurementConsent | null | undefined;
}

/** The one consent the request states (rule 3); disagreeing sources are a 400 before anything is written. */
export function agreedConsent(sources: ConsentSources): MeasurementConsent | null {
  const { topLevel, alias, url } = sources;
  if (topLevel && alias && topLevel !== alias) {
    throw invalidField('marketing.measurement_consent', `${alias} diverges from measurement_consent ${topLevel}`);
  }
  const body = topLevel ?? alias;
  if (url && body && url !== body) {
    const field = topLevel ? 'measurement_consent' : 'marketing.measurement_consent';
    throw invalidField('marketing.url_conversion', `its measurement_consent reads ${url}, which diverges from ${field} ${body}`);
  }
  return body ?? url ?? null;
}

export type TrackingValues = Record<StoredTrackingField, string | null>;

/** Rules 1 to 3: sent values win, a sent utm_* fills its svc_*, then the URL fills the gaps. */
export function normalizeTracking(
  sent: Partial<Record<TrackingField, string>>,
  fromUrl: Partial<Record<UrlParam, string>>,
): TrackingValues {
  const first = (...values: (string | undefined)[]) => values.find((v) => v !== undefined) ?? null;
  const values = {} as TrackingValues;
  for (const field of SVC_FIELDS) values[field] = first(sent[field]);
  for (const field of UTM_FIELDS) values[field] = first(sent[field]);
  for (const field of CLICK_ID_FIELDS) values[field] = first(sent[field], fromUrl[field]);
  for (const [utm, svc] of Object.entries(UTM_TO_SVC) as [UtmField, SvcField][]) values[svc] ??= sent[utm] ?? null;
  values.utm_search_term ??= sent.utm_term ?? null;
  for (const field of SVC_FIELDS) {
    if (field !== 'svc_creative') values[field] ??= fromUrl[field] ?? null;
  }
  for (const [utm, svc] of Object.entries(UTM_TO_SVC) as [UtmField, SvcField][]) values[svc] ??= fromUrl[utm] ?? null;
  for (const field of UTM_FIELDS) values[field] ??= fromUrl[field] ?? null;
  values.utm_search_term ??= fromUrl.utm_term ?? null;
  values.utm_medium = fromUrl.utm_medium ?? null;
  return values;
}

export interface AcquisitionDraft extends TrackingValues {
  url_conversion: string | null;
  conversion_url_full: string | null;
  /** The decision this acquisition carries; null when the request made none (a snapshot without a decision). */
  measurement_consent: MeasurementConsent | null;
}

export interface PreparedMarketing {
  consent: MeasurementConsent;
  /** Null when the marketing object is not an acquisition (rule 6). */
  acquisition: AcquisitionDraft | null;
  /** Never logged: the conversion URL as sent and as stored. */
  sensitive: string[];
}

/** Rule 6: an acquisition has at least one tracking value or a conversion URL; consent alone is not one. */
export const isAcquisition = (sent: Partial<Record<TrackingField | 'url_conversion', string>>): boolean =>
  Object.values(sent).some((v) => v !== undefined);

/** The lead consent (or a 400 on a divergence) and the acquisition to store, decided before any write. */
export function prepareMarketing(
  topLevel: MeasurementConsent | undefined,
  marketing: MarketingInput | null | undefined,
): PreparedMarketing {
  const sent: Partial<Record<TrackingField | 'url_conversion', string>> = {};
  for (const field of [...SVC_FIELDS, ...UTM_FIELDS, ...CLICK_ID_FIELDS, 'url_conversion'] as const) {
    const value = cleanText(marketing?.[field]);
    if (value !== undefined) sent[field] = value;
  }
  const aliasText = cleanText(marketing?.measurement_consent);
  const alias = aliasText && isConsent(aliasText) ? aliasText : undefined;
  const reading = sent.url_conversion ? readConversionUrl(sent.url_conversion) : null;
  const decision = agreedConsent({ topLevel, alias, url: reading?.consent });
  const consent = decision ?? 'GRANTED';
  if (!isAcquisition(sent)) return { consent, acquisition: null, sensitive: [] };
  const url = sent.url_conversion;
  const acquisition: AcquisitionDraft = {
    ...normalizeTracking(sent, reading?.params ?? {}),
    url_conversion: url ? conversionPageUrl(url) : null,
    conversion_url_full: url ? sanitizeConversionUrl(url, consent) : null,
    measurement_consent: decision,
  };
  const sensitive = url ? [...new Set([url, acquisition.conversion_url_full!])] : [];
  return { consent, acquisition, sensitive };
}

export const originSourceName = (a: Pick<TrackingValues, 'svc_source' | 'utm_source'>): string | null => a.svc_source ?? a.utm_source;

/** "IG" in any letter case is the Instagram origin. */
export const INSTAGRAM_SOURCE_NAME = 'Instagram';
export const leadSourceNameFor = (sourceName: string): string =>
  sourceName.trim().toLowerCase() === 'ig' ? INSTAGRAM_SOURCE_NAME : sourceName.trim();
