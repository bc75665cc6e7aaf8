import { AppError } from '@svc/platform/errors';
import { expect } from 'chai';
import type { CustomField, CustomFieldOption } from '../src/catalog/catalog.entity.js';
import { type FieldDefinition, planAnswer } from '../src/catalog/custom-field.answers.js';
import { normalizedContact } from '../src/contacts/contact.store.js';
import type { MarketingAcquisition } from '../src/marketing/acquisition.entity.js';
import { correctAcquisition, draftOf } from '../src/marketing/correction.js';
import { stageDuration } from '../src/sales/sales.summaries.js';

const invalidMessage = (work: () => unknown): string => {
  try {
    work();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).kind).to.equal('invalid');
    return (err as AppError).message;
  }
  return expect.fail('expected a 400');
};

const field = (type: string, options: string[] = []): FieldDefinition => {
  const f: CustomField = { id: `f-${type}`, companyId: 'c', entity: 'lead', name: type, type, required: false, createdAt: new Date(0) };
  const opts: CustomFieldOption[] = options.map((value, i) => ({
    id: `o-${value}`,
    companyId: 'c',
    fieldId: f.id,
    value,
    position: i + 1,
  }));
  return { field: f, options: opts };
};
const fields = new Map(
  [field('text'), field('number'), field('date'), field('select', ['A', 'B']), field('multiselect', ['X', 'Y']), field('file')].map((d) => [
    d.field.id,
    d,
  ]),
);
const ctx = { companyId: 'c', recordId: 'r', at: new Date(0), allowFiles: false };
const plan = (answer: Parameters<typeof planAnswer>[1], allowFiles = false) =>
  planAnswer(fields, answer, 'custom_fields[0]', { ...ctx, allowFiles });

describe('custom field answers (planAnswer)', () => {
  it('stores a trimmed text value, numbers and ISO dates', () => {
    expect(plan({ id: 'f-text', value: '  hi ' }).rows.map((r) => r.value)).to.deep.equal(['hi']);
    expect(plan({ id: 'f-number', value: -12.5 }).rows.map((r) => r.value)).to.deep.equal(['-12.5']);
    expect(plan({ id: 'f-date', value: '2026-01-31' }).rows).to.have.length(1);
  });
  it('an empty answer clears (no rows)', () => {
    expect(plan({ id: 'f-text', value: null }).rows).to.deep.equal([]);
    expect(plan({ id: 'f-select' }).rows).to.deep.equal([]);
  });
  it('maps options of select and multiselect fields', () => {
    expect(plan({ id: 'f-select', option_id: 'o-B' }).rows.map((r) => r.optionId)).to.deep.equal(['o-B']);
    expect(plan({ id: 'f-multiselect', option_ids: ['o-Y', 'o-X'] }).rows.map((r) => r.optionId)).to.deep.equal(['o-Y', 'o-X']);
  });
  it('names the offending part of a wrong answer', () => {
    expect(invalidMessage(() => plan({ id: 'nope', value: 'x' }))).to.contain('custom_fields[0].id');
    expect(invalidMessage(() => plan({ id: 'f-file', value: 'x' }))).to.contain('file fields');
    expect(invalidMessage(() => plan({ id: 'f-number', value: '1,5' }))).to.contain('custom_fields[0].value');
    expect(invalidMessage(() => plan({ id: 'f-date', value: '31/01/2026' }))).to.contain('ISO 8601');
    expect(invalidMessage(() => plan({ id: 'f-select', option_id: 'o-X' }))).to.contain('custom_fields[0].option_id');
    expect(invalidMessage(() => plan({ id: 'f-multiselect', option_ids: ['o-X', 'o-X'] }))).to.contain('repeat');
    expect(invalidMessage(() => plan({ id: 'f-text', option_id: 'o-A' }))).to.contain('takes a value');
  });
  it('accepts file fields where the caller allows them', () => {
    expect(plan({ id: 'f-file', value: 'file-1' }, true).rows).to.have.length(1);
  });
});

describe('contact normalization for deduplication', () => {
  it('compares e-mails without case, phones by digits, others trimmed', () => {
    expect(normalizedContact(1, ' Ana@Example.TEST ')).to.equal('ana@example.test');
    expect(normalizedContact(2, '+55 (11) 98888-7777')).to.equal('5511988887777');
    expect(normalizedContact(4, ' Handle ')).to.equal('Handle');
  });
});

describe('stage durations', () => {
  it('reads days, hours and minutes, seconds only under a minute', () => {
    expect(stageDuration({ id: 's', name: 'S' }, 93_784.9)).to.deep.equal({
      stage_id: 's',
      stage_name: 'S',
      total_seconds: 93_784,
      human_readable: '1d 2h 3m',
    });
    expect(stageDuration({ id: 's', name: 'S' }, 42).human_readable).to.equal('42s');
  });
});

describe('marketing corrections (rule 7)', () => {
  const current = {
    ...Object.fromEntries(Object.keys(draftOf(null)).map((k) => [k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), null])),
    id: 'a1',
    utmSource: 'Newsletter',
    svcSource: 'Newsletter',
    svcCampaign: 'Spring',
    utmCampaign: 'Spring',
    gclid: 'G-1',
  } as unknown as MarketingAcquisition;

  it('keeps omitted fields, clears null and blank ones, and a sent utm_* fills its svc_*', () => {
    const { draft, originTouched } = correctAcquisition({ utm_campaign: 'Summer', gclid: null, fbclid: '  ' }, current, 'GRANTED');
    expect(draft).to.include({
      utm_source: 'Newsletter',
      svc_source: 'Newsletter',
      utm_campaign: 'Summer',
      svc_campaign: 'Summer',
      gclid: null,
      fbclid: null,
    });
    expect(originTouched).to.equal(false);
  });
  it('fills only missing fields from the URL and keeps obref out without GRANTED', () => {
    const { draft, decision, originTouched } = correctAcquisition(
      { url_conversion: 'https://x.test/p?svc_campaign=url&svc_ad_set=set&obref=1&measurement_consent=denied#f' },
      current,
      'GRANTED',
    );
    expect(decision).to.equal('DENIED');
    expect(originTouched).to.equal(true);
    expect(draft).to.include({
      svc_campaign: 'Spring',
      svc_ad_set: 'set',
      url_conversion: 'https://x.test/p',
      measurement_consent: 'DENIED',
    });
    expect(draft?.conversion_url_full).to.equal('https://x.test/p?svc_campaign=url&svc_ad_set=set&measurement_consent=denied');
  });
  it('a divergent alias and URL consent are a 400; a lone alias or an empty object is no acquisition', () => {
    expect(
      invalidMessage(() =>
        correctAcquisition(
          { measurement_consent: 'GRANTED', url_conversion: 'https://x.test/?measurement_consent=DENIED' },
          null,
          'GRANTED',
        ),
      ),
    ).to.contain('marketing.url_conversion');
    expect(correctAcquisition({ measurement_consent: 'DENIED' }, null, 'GRANTED')).to.include({ decision: 'DENIED', draft: null });
    expect(correctAcquisition({}, null, 'GRANTED').draft).to.equal(null);
    expect(correctAcquisition({ gclid: null }, null, 'GRANTED').draft).to.equal(null);
  });
});
