import { AppError } from '@svc/platform/errors';
import { parse } from '@svc/platform/http/parse';
import { expect } from 'chai';
import { createLeadBody } from '../src/leads/lead.schema.js';
import type { MarketingAcquisition } from '../src/marketing/acquisition.entity.js';
import { effectiveLeadSourceId, marketingLeadSourceView } from '../src/marketing/acquisition.view.js';
import { REDACTED_URL, withoutSensitiveText } from '../src/marketing/redaction.js';
import {
  agreedConsent,
  cleanText,
  conversionPageUrl,
  isAcquisition,
  leadSourceNameFor,
  normalizeTracking,
  originSourceName,
  prepareMarketing,
  readConversionUrl,
  readUrlConsent,
  sanitizeConversionUrl,
  singleParamValue,
  TRACKING_MAX_LENGTH,
  withoutObref,
} from '../src/marketing/tracking.js';
import { effectiveConsent } from '../src/sales/sales.snapshot.js';

/** The 400 a function throws, as the HTTP layer would answer it. */
function invalidMessage(work: () => unknown): string {
  try {
    work();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).kind).to.equal('invalid');
    return (err as AppError).message;
  }
  expect.fail('expected a 400');
}

describe('marketing tracking (pure functions)', () => {
  describe('cleanText (rule 1)', () => {
    it('trims values', () => expect(cleanText('  Google \t')).to.equal('Google'));
    it('ignores empty, blank and null values', () => {
      for (const v of ['', '   ', '\n\t', null, undefined]) expect(cleanText(v), String(v)).to.equal(undefined);
    });
  });

  describe('readUrlConsent (rule 4)', () => {
    it('is null when the URL carries no consent, or only blank ones', () => {
      expect(readUrlConsent([])).to.equal(null);
      expect(readUrlConsent(['', '  '])).to.equal(null);
    });
    it('reads each of the three values', () => {
      for (const v of ['GRANTED', 'DENIED', 'UNSPECIFIED'] as const) expect(readUrlConsent([v])).to.equal(v);
    });
    it('compares trimmed and in upper case (a URL written by hand says `granted`)', () => {
      expect(readUrlConsent([' granted '])).to.equal('GRANTED');
      expect(readUrlConsent(['Denied'])).to.equal('DENIED');
    });
    it('counts equal repeats once', () => expect(readUrlConsent(['DENIED', 'denied', ' DENIED'])).to.equal('DENIED'));
    it('gives UNSPECIFIED for divergent repeats', () => expect(readUrlConsent(['GRANTED', 'DENIED'])).to.equal('UNSPECIFIED'));
    it('gives UNSPECIFIED for an unknown value, alone or next to a known one', () => {
      expect(readUrlConsent(['yes'])).to.equal('UNSPECIFIED');
      expect(readUrlConsent(['GRANTED', 'yes'])).to.equal('UNSPECIFIED');
    });
    it('ignores a blank repeat next to a value', () => expect(readUrlConsent(['', 'GRANTED'])).to.equal('GRANTED'));
  });

  describe('singleParamValue', () => {
    it('takes one value trimmed, equal repeats once', () => expect(singleParamValue([' a ', 'a'], 10)).to.equal('a'));
    it('ignores divergent repeats as ambiguous', () => expect(singleParamValue(['a', 'b'], 10)).to.equal(undefined));
    it('ignores a value over the field limit', () => expect(singleParamValue(['x'.repeat(11)], 10)).to.equal(undefined));
  });

  describe('readConversionUrl (rules 3 and 4)', () => {
    it('reads svc_*, utm_* (with utm_medium), gclid and fbclid from the query string', () => {
      const r = readConversionUrl(
        'https://site.test/p?svc_code=T1&svc_source=S&svc_campaign=C&svc_ad_set=A&svc_content=CT&svc_displayed_on=D&svc_conversion_tool=F' +
          '&utm_search_term=ST&utm_source=US&utm_medium=cpc&utm_campaign=UC&utm_ad_set=UA&utm_content=UCT&utm_term=UT&utm_display_on=UD' +
          '&gclid=G1&fbclid=F1&other=x',
      );
      expect(r.wellFormed).to.equal(true);
      expect(r.consent).to.equal(null);
      expect(r.params).to.deep.equal({
        svc_code: 'T1',
        svc_source: 'S',
        svc_campaign: 'C',
        svc_ad_set: 'A',
        svc_content: 'CT',
        svc_displayed_on: 'D',
        svc_conversion_tool: 'F',
        utm_search_term: 'ST',
        utm_source: 'US',
        utm_medium: 'cpc',
        utm_campaign: 'UC',
        utm_ad_set: 'UA',
        utm_content: 'UCT',
        utm_term: 'UT',
        utm_display_on: 'UD',
        gclid: 'G1',
        fbclid: 'F1',
      });
    });
    it('does not read svc_creative from the URL (rule 3 does not list it)', () => {
      expect(readConversionUrl('https://site.test/?svc_creative=banner').params).to.deep.equal({});
    });
    it('decodes percent-encoding and `+` in names and values', () => {
      const r = readConversionUrl('https://site.test/?utm%5Fsource=Black%20Friday&utm_campaign=a+b%2Bc&utm_content=%E2%9C%93');
      expect(r.params).to.deep.equal({ utm_source: 'Black Friday', utm_campaign: 'a b+c', utm_content: '✓' });
    });
    it('survives broken percent-encoding (kept as text; invalid UTF-8 becomes U+FFFD, as WHATWG decodes it)', () => {
      expect(readConversionUrl('https://site.test/?utm_source=%E0%A4%A&gclid=%ZZ').params).to.deep.equal({
        utm_source: '\uFFFD%A',
        gclid: '%ZZ',
      });
    });
    it('keeps equal repeated parameters and drops divergent ones', () => {
      const r = readConversionUrl('https://site.test/?utm_source=a&utm_source=a&utm_campaign=x&utm_campaign=y');
      expect(r.params).to.deep.equal({ utm_source: 'a' });
    });
    it('ignores blank parameters', () => expect(readConversionUrl('https://site.test/?utm_source=%20&gclid=').params).to.deep.equal({}));
    it('reads nothing from the fragment', () => {
      const r = readConversionUrl('https://site.test/#/landing?utm_source=spa&measurement_consent=DENIED');
      expect(r).to.deep.equal({ wellFormed: true, params: {}, consent: null });
    });
    it('extracts the consent parameter, encoded or not', () => {
      expect(readConversionUrl('https://site.test/?measurement_consent=DENIED').consent).to.equal('DENIED');
      expect(readConversionUrl('https://site.test/?measurement%5Fconsent=granted').consent).to.equal('GRANTED');
      expect(readConversionUrl('https://site.test/?measurement_consent=GRANTED&measurement_consent=DENIED').consent).to.equal(
        'UNSPECIFIED',
      );
      expect(readConversionUrl('https://site.test/?measurement_consent=maybe').consent).to.equal('UNSPECIFIED');
    });
    it('treats text that is not an absolute http(s) URL as malformed: nothing read, consent UNSPECIFIED', () => {
      for (const text of [
        'www.site.test/?utm_source=x',
        '/landing?utm_source=x',
        'http://',
        'https://exa mple.test/?utm_source=x',
        'ftp://site.test/?utm_source=x',
        'javascript:alert(1)//?utm_source=x',
        'mailto:a@b.test?utm_source=x',
      ]) {
        expect(readConversionUrl(text), text).to.deep.equal({ wellFormed: false, params: {}, consent: 'UNSPECIFIED' });
      }
    });
    it('reads a very long URL but ignores a parameter longer than its field', () => {
      const long = 'x'.repeat(TRACKING_MAX_LENGTH.utm_source + 1);
      const r = readConversionUrl(`https://site.test/?utm_source=${long}&utm_campaign=ok&pad=${'p'.repeat(3000)}`);
      expect(r.params).to.deep.equal({ utm_campaign: 'ok' });
    });
  });

  describe('sanitizeConversionUrl and conversionPageUrl (rule 5)', () => {
    const url = 'https://site.test/a/b?utm_source=x&obref=secret&q=%20a+b#section-2';
    it('keeps the whole URL with GRANTED', () => {
      expect(sanitizeConversionUrl(url, 'GRANTED')).to.equal(url);
    });
    it('removes obref and drops the fragment without GRANTED, other parameters keep their exact encoding', () => {
      for (const consent of ['DENIED', 'UNSPECIFIED'] as const) {
        expect(sanitizeConversionUrl(url, consent), consent).to.equal('https://site.test/a/b?utm_source=x&q=%20a+b');
      }
    });
    it('removes every obref, in any letter case and percent-encoded, with or without a value', () => {
      expect(sanitizeConversionUrl('https://site.test/?obref=1&a=1&OBREF=2&ob%72ef=3&obref&b=2', 'DENIED')).to.equal(
        'https://site.test/?a=1&b=2',
      );
    });
    it('leaves no `?` when obref was the only parameter, and drops an empty fragment', () => {
      expect(sanitizeConversionUrl('https://site.test/p?obref=1#', 'DENIED')).to.equal('https://site.test/p');
    });
    it('does not touch parameters that only contain obref in their name', () => {
      expect(sanitizeConversionUrl('https://site.test/?obref_id=1&xobref=2', 'DENIED')).to.equal('https://site.test/?obref_id=1&xobref=2');
    });
    it('always drops credentials', () => {
      expect(sanitizeConversionUrl('https://user:pw@site.test/p?x=1#f', 'GRANTED')).to.equal('https://site.test/p?x=1#f');
    });
    it('sanitizes a malformed URL on its text', () => {
      expect(sanitizeConversionUrl('www.site.test/p?obref=1&x=2#frag', 'UNSPECIFIED')).to.equal('www.site.test/p?x=2');
    });
    it('withoutObref works on a bare query string', () => expect(withoutObref('a=1&obref=2&c')).to.equal('a=1&c'));
    it('url_conversion is the page address: no credentials, query or fragment; host normalized', () => {
      expect(conversionPageUrl('https://User:pw@Site.TEST:443/a/b?x=1#f')).to.equal('https://site.test/a/b');
      expect(conversionPageUrl('http://site.test:8080?x=1')).to.equal('http://site.test:8080/');
      expect(conversionPageUrl('www.site.test/p?obref=1#f')).to.equal('www.site.test/p');
    });
  });

  describe('agreedConsent (POST /leads rule 3)', () => {
    it('is null when no source decides', () => expect(agreedConsent({})).to.equal(null));
    it('takes the one source that decides', () => {
      expect(agreedConsent({ topLevel: 'DENIED' })).to.equal('DENIED');
      expect(agreedConsent({ alias: 'DENIED' })).to.equal('DENIED');
      expect(agreedConsent({ url: 'UNSPECIFIED' })).to.equal('UNSPECIFIED');
      expect(agreedConsent({ url: null })).to.equal(null);
    });
    it('accepts sources that agree', () =>
      expect(agreedConsent({ topLevel: 'GRANTED', alias: 'GRANTED', url: 'GRANTED' })).to.equal('GRANTED'));
    it('is a 400 naming the alias when it diverges from the top-level value', () => {
      expect(invalidMessage(() => agreedConsent({ topLevel: 'GRANTED', alias: 'DENIED' }))).to.equal(
        'marketing.measurement_consent: DENIED diverges from measurement_consent GRANTED',
      );
    });
    it('is a 400 naming url_conversion when the URL diverges from the body', () => {
      expect(invalidMessage(() => agreedConsent({ topLevel: 'GRANTED', url: 'DENIED' }))).to.match(
        /^marketing\.url_conversion: .*DENIED.* measurement_consent GRANTED$/,
      );
      expect(invalidMessage(() => agreedConsent({ alias: 'DENIED', url: 'GRANTED' }))).to.match(
        /^marketing\.url_conversion: .* marketing\.measurement_consent DENIED$/,
      );
    });
    it('counts the UNSPECIFIED of an unreadable URL as a reading (it diverges from GRANTED)', () => {
      expect(invalidMessage(() => agreedConsent({ topLevel: 'GRANTED', url: 'UNSPECIFIED' }))).to.contain('marketing.url_conversion');
    });
  });

  describe('normalizeTracking (rules 2 and 3)', () => {
    it('fills svc_* from the utm_* sent when the svc_* is not sent', () => {
      const v = normalizeTracking(
        { utm_source: 'google', utm_campaign: 'c', utm_ad_set: 'a', utm_content: 'ct', utm_display_on: 'feed' },
        {},
      );
      expect(v).to.include({ svc_source: 'google', svc_campaign: 'c', svc_ad_set: 'a', svc_content: 'ct', svc_displayed_on: 'feed' });
      expect(v).to.include({ utm_source: 'google', utm_campaign: 'c' });
    });
    it('keeps an svc_* sent over its utm_*', () => {
      expect(normalizeTracking({ svc_source: 'Direct', utm_source: 'google' }, {})).to.include({
        svc_source: 'Direct',
        utm_source: 'google',
      });
    });
    it('turns utm_term into utm_search_term unless utm_search_term is sent', () => {
      expect(normalizeTracking({ utm_term: 'shoes' }, {})).to.include({ utm_search_term: 'shoes', utm_term: 'shoes' });
      expect(normalizeTracking({ utm_term: 'shoes', utm_search_term: 'boots' }, {})).to.include({ utm_search_term: 'boots' });
    });
    it('fills missing fields from the URL; values sent win', () => {
      const v = normalizeTracking(
        { svc_campaign: 'Sent', gclid: 'G-sent' },
        { svc_campaign: 'Url', svc_code: 'T1', gclid: 'G-url', fbclid: 'F' },
      );
      expect(v).to.include({ svc_campaign: 'Sent', svc_code: 'T1', gclid: 'G-sent', fbclid: 'F' });
    });
    it('a utm_* sent wins over the svc_* of the URL (it is a value sent)', () => {
      expect(normalizeTracking({ utm_source: 'sent' }, { svc_source: 'url' })).to.include({ svc_source: 'sent', utm_source: 'sent' });
    });
    it("the URL's svc_* wins over the URL's utm_*, which fills what is left", () => {
      expect(normalizeTracking({}, { svc_source: 's', utm_source: 'u', utm_campaign: 'c' })).to.include({
        svc_source: 's',
        utm_source: 'u',
        svc_campaign: 'c',
        utm_campaign: 'c',
      });
    });
    it("the URL's utm_search_term wins over its utm_term", () => {
      expect(normalizeTracking({}, { utm_search_term: 'a', utm_term: 'b' })).to.include({ utm_search_term: 'a', utm_term: 'b' });
      expect(normalizeTracking({}, { utm_term: 'b' })).to.include({ utm_search_term: 'b' });
    });
    it('takes utm_medium only from the URL and leaves absent fields null', () => {
      const v = normalizeTracking({ svc_creative: 'banner' }, { utm_medium: 'cpc' });
      expect(v.utm_medium).to.equal('cpc');
      expect(v.svc_creative).to.equal('banner');
      expect(v.svc_code).to.equal(null);
      expect(Object.keys(v)).to.have.length(18);
    });
  });

  describe('prepareMarketing (rules 1 to 6, before any write)', () => {
    it('defaults the consent to GRANTED and records no acquisition without marketing', () => {
      expect(prepareMarketing(undefined, undefined)).to.deep.equal({ consent: 'GRANTED', acquisition: null, sensitive: [] });
      expect(prepareMarketing('DENIED', null)).to.deep.equal({ consent: 'DENIED', acquisition: null, sensitive: [] });
    });
    it('rule 6: a lone alias, an empty object, only null or blank fields are not an acquisition', () => {
      expect(prepareMarketing(undefined, { measurement_consent: 'DENIED' })).to.deep.equal({
        consent: 'DENIED',
        acquisition: null,
        sensitive: [],
      });
      expect(prepareMarketing(undefined, {}).acquisition).to.equal(null);
      expect(
        prepareMarketing(undefined, { utm_source: null, svc_code: '  ', url_conversion: '', measurement_consent: '' }).acquisition,
      ).to.equal(null);
    });
    it('rule 1: trims values', () => {
      const p = prepareMarketing(undefined, { utm_source: '  google ', gclid: ' G ' });
      expect(p.acquisition).to.include({ utm_source: 'google', svc_source: 'google', gclid: 'G', measurement_consent: null });
    });
    it('keeps the full URL with the default GRANTED, and records no decision on the snapshot', () => {
      const url = 'https://site.test/p?utm_source=fb&obref=abc#top';
      const p = prepareMarketing(undefined, { url_conversion: url });
      expect(p.consent).to.equal('GRANTED');
      expect(p.acquisition).to.include({
        url_conversion: 'https://site.test/p',
        conversion_url_full: url,
        svc_source: 'fb',
        utm_source: 'fb',
        measurement_consent: null,
      });
      expect(p.sensitive).to.deep.equal([url]);
    });
    it("takes the URL's consent when the body has none and sanitizes with it", () => {
      const url = 'https://site.test/p?measurement_consent=DENIED&obref=abc&gclid=G#top';
      const p = prepareMarketing(undefined, { url_conversion: url });
      expect(p.consent).to.equal('DENIED');
      expect(p.acquisition).to.include({
        conversion_url_full: 'https://site.test/p?measurement_consent=DENIED&gclid=G',
        gclid: 'G',
        measurement_consent: 'DENIED',
      });
      expect(p.sensitive).to.include(url);
    });
    it('sanitizes with a top-level DENIED too', () => {
      const p = prepareMarketing('DENIED', { url_conversion: 'https://site.test/?obref=1#f' });
      expect(p.acquisition?.conversion_url_full).to.equal('https://site.test/');
      expect(p.acquisition?.measurement_consent).to.equal('DENIED');
    });
    it('a malformed URL reads UNSPECIFIED: the lead is UNSPECIFIED, nothing is extracted, the text is stored sanitized', () => {
      const p = prepareMarketing(undefined, { url_conversion: 'site.test/p?utm_source=x&obref=1#f' });
      expect(p.consent).to.equal('UNSPECIFIED');
      expect(p.acquisition).to.include({
        utm_source: null,
        url_conversion: 'site.test/p',
        conversion_url_full: 'site.test/p?utm_source=x',
        measurement_consent: 'UNSPECIFIED',
      });
    });
    it('throws the divergence before anything else, naming the field', () => {
      expect(invalidMessage(() => prepareMarketing('GRANTED', { measurement_consent: 'DENIED' }))).to.contain(
        'marketing.measurement_consent',
      );
      expect(
        invalidMessage(() => prepareMarketing('GRANTED', { url_conversion: 'https://site.test/?measurement_consent=DENIED' })),
      ).to.contain('marketing.url_conversion');
      expect(invalidMessage(() => prepareMarketing('DENIED', { url_conversion: 'not a url' }))).to.contain('marketing.url_conversion');
    });
    it('agreeing sources are one decision', () => {
      const p = prepareMarketing('DENIED', {
        measurement_consent: ' DENIED ',
        url_conversion: 'https://site.test/?measurement_consent=denied',
      });
      expect(p.consent).to.equal('DENIED');
      expect(p.acquisition?.measurement_consent).to.equal('DENIED');
    });
  });

  describe('origin helpers', () => {
    it('isAcquisition needs one value', () => {
      expect(isAcquisition({})).to.equal(false);
      expect(isAcquisition({ fbclid: 'x' })).to.equal(true);
    });
    it('svc_source has priority over utm_source', () => {
      expect(originSourceName({ svc_source: 'A', utm_source: 'B' })).to.equal('A');
      expect(originSourceName({ svc_source: null, utm_source: 'B' })).to.equal('B');
      expect(originSourceName({ svc_source: null, utm_source: null })).to.equal(null);
    });
    it('IG in any letter case is Instagram; other names are kept as sent', () => {
      for (const ig of ['IG', 'ig', 'Ig', 'iG', ' ig ']) expect(leadSourceNameFor(ig), ig).to.equal('Instagram');
      expect(leadSourceNameFor(' Google ')).to.equal('Google');
      expect(leadSourceNameFor('igloo')).to.equal('igloo');
    });
  });

  describe('consent and origin of a lead (spec "Measurement consent", lead detail lead_source)', () => {
    it("the lead's canonical value wins", () => {
      expect(effectiveConsent({ measurementConsent: 'DENIED' }, { latestDecision: 'GRANTED' })).to.equal('DENIED');
    });
    it('a historical lead without one uses the latest decision of its snapshots', () => {
      expect(effectiveConsent({ measurementConsent: null }, { latestDecision: 'DENIED' })).to.equal('DENIED');
    });
    it('both absent is UNSPECIFIED', () => {
      expect(effectiveConsent({ measurementConsent: null }, { latestDecision: null })).to.equal('UNSPECIFIED');
    });
    it("the effective origin is the latest acquisition's, else the lead's", () => {
      expect(effectiveLeadSourceId('lead-src', { leadSourceId: 'acq-src' })).to.equal('acq-src');
      expect(effectiveLeadSourceId('lead-src', { leadSourceId: null })).to.equal('lead-src');
      expect(effectiveLeadSourceId('lead-src', null)).to.equal('lead-src');
      expect(effectiveLeadSourceId(null, null)).to.equal(null);
    });
  });

  describe('marketingLeadSourceView', () => {
    it('has exactly the contract fields, our svc_* under its names, unknown sources null', () => {
      const acq = {
        id: 'a1',
        leadSourceId: 'ls1',
        utmSearchTerm: 'st',
        utmMedium: 'cpc',
        urlConversion: 'https://site.test/p',
        svcCampaign: 'camp',
        svcAdSet: 'set',
        svcContent: 'content',
        svcDisplayedOn: 'feed',
        svcConversionTool: 'form',
        svcCreative: 'banner',
        gclid: 'G',
        fbclid: 'F',
        conversionUrlFull: 'https://site.test/p?x=1',
        measurementConsent: 'DENIED',
      } as unknown as MarketingAcquisition;
      const view = marketingLeadSourceView(acq, new Map([['ls1', { id: 'ls1', name: 'Ads', logo: null, companyId: 'c' }]]));
      expect(view).to.deep.equal({
        id: 'a1',
        utm_search_term: 'st',
        utm_medium: 'cpc',
        lead_source: { id: 'ls1', name: 'Ads', logo: null },
        url_conversion: 'https://site.test/p',
        campaing_name: 'camp',
        ad_set_name: 'set',
        content_name: 'content',
        displayed_on_name: 'feed',
        conversion_tool_name: 'form',
        creative: { id: null, value: 'banner', creative_uri: null },
        source_url: null,
        headline: null,
        ad_body: null,
        media_type: null,
        ads_clid_id: null,
        gclid: 'G',
        fbclid: 'F',
        fbc: null,
        fbp: null,
        conversion_url_full: 'https://site.test/p?x=1',
        measurement_consent: 'DENIED',
      });
      expect(marketingLeadSourceView(null, new Map())).to.equal(null);
    });
  });

  describe('the marketing body (caps are 400s naming the field)', () => {
    const bodyError = (marketing: unknown) => invalidMessage(() => parse(createLeadBody, { title: 't', marketing }));
    it('accepts null, null fields and blank values', () => {
      expect(parse(createLeadBody, { title: 't', marketing: null }).marketing).to.equal(null);
      expect(
        parse(createLeadBody, { title: 't', marketing: { utm_source: null, gclid: '  ', measurement_consent: '' } }).marketing,
      ).to.deep.equal({
        utm_source: null,
        gclid: '',
        measurement_consent: '',
      });
    });
    it('caps every field, after trimming', () => {
      expect(bodyError({ url_conversion: `https://site.test/?q=${'x'.repeat(4096)}` })).to.equal(
        'marketing.url_conversion: must be at most 4096 characters',
      );
      expect(bodyError({ svc_source: 's'.repeat(201) })).to.equal('marketing.svc_source: must be at most 200 characters');
      expect(bodyError({ utm_campaign: 'c'.repeat(256) })).to.contain('marketing.utm_campaign');
      expect(bodyError({ gclid: 'g'.repeat(501) })).to.contain('marketing.gclid');
      expect(parse(createLeadBody, { title: 't', marketing: { svc_source: ` ${'s'.repeat(200)} ` } }).marketing?.svc_source).to.have.length(
        200,
      );
    });
    it('refuses unknown keys, non-strings and consent values outside the enum', () => {
      expect(bodyError({ utm_medium: 'cpc' })).to.contain('utm_medium');
      expect(bodyError({ utm_source: 3 })).to.equal('marketing.utm_source: must be a string');
      expect(bodyError({ measurement_consent: 'granted' })).to.equal(
        'marketing.measurement_consent: must be GRANTED, DENIED or UNSPECIFIED',
      );
      expect(bodyError('utm_source=x')).to.contain('marketing');
    });
    it('crm_lead_source_id must be a UUID', () => {
      expect(invalidMessage(() => parse(createLeadBody, { title: 't', crm_lead_source_id: 'nope' }))).to.contain('crm_lead_source_id');
    });
  });

  describe('withoutSensitiveText', () => {
    const url = 'https://site.test/p?obref=s3cret#frag';
    it('replaces an error quoting the URL by a plain one without it or the driver fields', () => {
      const err = Object.assign(new Error(`insert failed: ${url}`), { detail: `Failing row contains (${url})`, parameters: [url] });
      const clean = withoutSensitiveText(err, [url]) as Error;
      expect(clean).to.not.equal(err);
      expect(clean.message).to.equal(`insert failed: ${REDACTED_URL}`);
      expect(JSON.stringify({ ...clean, message: clean.message, stack: clean.stack })).to.not.contain('s3cret');
    });
    it('catches the URL in a driver field only', () => {
      const err = Object.assign(new Error('null value in column'), { detail: `Failing row contains (${url})` });
      const clean = withoutSensitiveText(err, [url]) as Error & { detail?: string };
      expect(clean.detail).to.equal(undefined);
      expect(clean.message).to.equal('null value in column');
    });
    it('passes other errors and our 400s unchanged', () => {
      const other = new Error('connection lost');
      expect(withoutSensitiveText(other, [url])).to.equal(other);
      const answer = new AppError('invalid', `x ${url}`);
      expect(withoutSensitiveText(answer, [url])).to.equal(answer);
    });
  });
});
