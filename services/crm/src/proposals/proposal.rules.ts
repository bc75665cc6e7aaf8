import { invalidField } from '@svc/platform/errors';
import type { ProposalItemInput } from './proposal.schema.js';

export interface PricedItem extends ProposalItemInput {
  total: number;
}

export interface Pricing {
  items: PricedItem[];
  subtotal: number;
  total: number;
}

/** Line totals, the subtotal and the total are numeric(16,2) columns: a sum beyond them is a 400, not a store error. */
const TOTAL_MAX_CENTS = 10n ** 16n - 1n;
const TOTAL_RULE = 'must be at most 99999999999999.99';

const cents = (v: number) => BigInt(Math.round(v * 100));
const fromCents = (c: bigint) => Number(c) / 100;

/** Rounds a/b to the nearest integer, halves away from zero (b > 0). */
const roundDiv = (a: bigint, b: bigint) => (a >= 0n ? (2n * a + b) / (2n * b) : -((2n * -a + b) / (2n * b)));

/** Exact integer cents; a discount needs both type and value, a null type or zero value is none. */
export function price(items: ProposalItemInput[], discountType: 'percentage' | 'amount' | null, discountValue: number | null): Pricing {
  const priced = items.map((item, i) => {
    const quantity = BigInt(Math.round(item.quantity * 10_000));
    const total = roundDiv(quantity * cents(item.unit_price), 10_000n);
    if (total > TOTAL_MAX_CENTS) throw invalidField(`items.${i}.quantity`, `quantity × unit_price ${TOTAL_RULE}`);
    return { ...item, total: fromCents(total) };
  });
  const subtotal = priced.reduce((sum, i) => sum + cents(i.total), 0n);
  if (subtotal > TOTAL_MAX_CENTS) throw invalidField('items', `the sum of the items ${TOTAL_RULE}`);
  if ((discountType === null) !== (discountValue === null)) {
    throw discountType === null
      ? invalidField('discount_type', 'required with discount_value')
      : invalidField('discount_value', 'required with discount_type');
  }
  let discount = 0n;
  if (discountType === 'percentage') {
    if (discountValue! > 100) throw invalidField('discount_value', 'a percentage must be 0 to 100');
    discount = roundDiv(subtotal * cents(discountValue!), 10_000n);
  } else if (discountType === 'amount') {
    discount = cents(discountValue!);
    if (discount > subtotal) throw invalidField('discount_value', 'must not exceed the subtotal');
  }
  return { items: priced, subtotal: fromCents(subtotal), total: fromCents(subtotal - discount) };
}
