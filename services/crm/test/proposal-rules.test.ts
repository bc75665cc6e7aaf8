import { expect } from 'chai';
import { price } from '../src/proposals/proposal.rules.js';

const item = (quantity: number, unit_price: number) => ({ name: 'x', quantity, unit_price });

describe('proposal prices: computed by crm in exact cents', () => {
  it('sums lines of quantity × unit price rounded to the cent, half away from zero', () => {
    const p = price([item(3, 19.99), item(1.5, 10), item(0.3333, 0.05)], null, null);
    expect(p.items.map((i) => i.total)).to.deep.equal([59.97, 15, 0.02]);
    expect(p.subtotal).to.equal(74.99);
    expect(p.total).to.equal(74.99);
    // 0.1 + 0.2 in floating point is not 0.3; in cents it is.
    expect(price([item(1, 0.1), item(1, 0.2)], null, null).subtotal).to.equal(0.3);
    expect(price([item(0.5, 0.01)], null, null).items[0]!.total).to.equal(0.01);
  });
  it('takes a percentage of the subtotal rounded to the cent, or an amount up to the subtotal', () => {
    expect(price([item(3, 19.99), item(1.5, 10)], 'percentage', 10).total).to.equal(67.47);
    expect(price([item(1, 100)], 'percentage', 100).total).to.equal(0);
    expect(price([item(1, 100)], 'amount', 100).total).to.equal(0);
    expect(price([item(1, 100)], 'amount', 0.01).total).to.equal(99.99);
    expect(price([], null, null)).to.deep.include({ subtotal: 0, total: 0 });
  });
  it('refuses a percentage over 100, an amount over the subtotal, and a type or value alone, naming the field', () => {
    expect(() => price([item(1, 100)], 'percentage', 100.01)).to.throw('discount_value');
    expect(() => price([item(1, 100)], 'amount', 100.01)).to.throw('discount_value: must not exceed the subtotal');
    expect(() => price([item(1, 100)], null, 5)).to.throw('discount_type');
    expect(() => price([item(1, 100)], 'amount', null)).to.throw('discount_value');
  });
  it('stays exact for large values', () => {
    expect(price([item(100_000_000, 999_999.99)], null, null).subtotal).to.equal(99_999_999_000_000);
    // Beyond the numeric(16,2) columns of a line and the subtotal: a 400 naming the field (issue 23 item 2).
    expect(() => price([item(1_000_000_000, 999_999.99)], null, null)).to.throw('items.0.quantity: quantity × unit_price must be at most');
    const big = item(100_000_000, 999_999.99);
    expect(() => price([big, big], null, null)).to.throw('items: the sum of the items must be at most');
  });
});
