import { AppError } from '@svc/platform/errors';
import { expect } from 'chai';
import {
  agreedConsent,
  cleanText,
  conversionPageUrl,
  normalizeTracking,
  readConversionUrl,
  readUrlConsent,
  sanitizeConversionUrl,
  singleParamValue,
  TRACKING_MAX_LENGTH,
  withoutObref,
} from '../src/marketing/tracking.js';

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

describe('marketing tracking (pure functions): reading and normalizing', () => {
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
});
