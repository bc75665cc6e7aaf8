import { skipParam, takeParam } from '@svc/platform/http/parse';
import { z } from 'zod';

const uuid = z.uuid('must be a UUID');
const code = (values: number[]) =>
  z.coerce.number({ message: `must be ${values.join(' or ')}` }).refine((v) => values.includes(v), `must be ${values.join(' or ')}`);

/** Exactly one party; status 1 active, 2 inactive (decision 0165). */
export const createCustomerBody = z
  .strictObject({
    person_id: uuid.optional(),
    organization_id: uuid.optional(),
    status: z.union([z.literal(1), z.literal(2)], { message: 'must be 1 or 2' }).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.person_id === undefined && b.organization_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['person_id'], message: 'send person_id or organization_id' });
    else if (b.person_id !== undefined && b.organization_id !== undefined)
      ctx.addIssue({ code: 'custom', path: ['organization_id'], message: 'send person_id or organization_id, not both' });
  });
export type CreateCustomerBody = z.infer<typeof createCustomerBody>;

export const listCustomersQuery = z.strictObject({
  type: code([1, 2]).optional(),
  status: code([1, 2]).optional(),
  person_id: uuid.optional(),
  organization_id: uuid.optional(),
  skip: skipParam().default(0),
  take: takeParam(100).default(20),
  cursor: z.string().max(200).optional(),
});
export type ListCustomersQuery = z.infer<typeof listCustomersQuery>;
