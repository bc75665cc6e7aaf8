import { AppError } from '@svc/platform/errors';
import { parse } from '@svc/platform/http/parse';
import { expect } from 'chai';
import { createLeadBody } from '../src/leads/lead.schema.js';
import type { MarketingAcquisition } from '../src/marketing/acquisition.entity.js';
import { effectiveLeadSourceId, marketingLeadSourceView } from '../src/marketing/acquisition.view.js';
import { REDACTED_URL, withoutSensitiveText } from '../src/marketing/redaction.js';
import { isAcquisition, leadSourceNameFor, originSourceName, prepareMarketing } from '../src/marketing/tracking.js';
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

describe("marketing tracking (pure functions): a creation's marketing, origin and consent", () => {
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
