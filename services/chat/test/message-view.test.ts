import { expect } from 'chai';
import { iso } from '../src/messages/message.view.js';

describe('timestamps in views', () => {
  const viaDate = (v: string) => new Date(v).toISOString();

  it("prints Postgres's UTC text of every fraction length as Date prints it, the fraction cut to milliseconds", () => {
    let checked = 0;
    for (let digits = 0; digits <= 6; digits++) {
      for (let f = 0; f < 10 ** digits; f += digits > 3 ? 7 ** (digits - 2) : 1) {
        const frac = digits === 0 ? '' : `.${String(f).padStart(digits, '0')}`;
        for (const v of [
          `2026-11-26 19:30:46${frac}+00`,
          `2026-11-26T19:30:46${frac}+00:00`,
          `2026-11-26 00:00:00${frac}+00:00`,
          `1999-12-31T23:59:59${frac}+00:00`,
        ]) {
          expect(iso(v), v).to.equal(viaDate(v));
          checked++;
        }
      }
    }
    expect(checked).to.be.greaterThan(5000);
  });

  it('leaves other offsets, early years and Dates to Date, and null and undefined to null', () => {
    for (const v of [
      '2026-11-26 19:30:46.5+05:30',
      '2026-11-26 19:30:46-03',
      '2026-11-26T19:30:46.123Z',
      '0050-01-01 00:00:00+00',
      '0999-06-01 12:00:00.25+00',
      '2024-02-29 23:59:59.999999+00',
    ]) {
      expect(iso(v), v).to.equal(viaDate(v));
    }
    expect(() => iso('1999-12-31T23:59:59.5+00')).to.throw(RangeError);
    expect(() => viaDate('1999-12-31T23:59:59.5+00')).to.throw(RangeError);
    const d = new Date('2026-01-02T03:04:05.678Z');
    expect(iso(d)).to.equal('2026-01-02T03:04:05.678Z');
    expect(iso(null)).to.equal(null);
    expect(iso(undefined)).to.equal(null);
  });
});
