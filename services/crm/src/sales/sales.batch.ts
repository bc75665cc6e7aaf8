import { AppError, errorBodyOf, forbidden, invalidField } from '@svc/platform/errors';
import { toAppError } from '@svc/platform/http/errors';
import { parse } from '@svc/platform/http/parse';
import { hasPermission, type Identity } from '@svc/platform/identity';
import { z } from 'zod';
import type { SalesRecord } from './sales.entity.js';
import type { CreationAnswer } from './sales.idempotency.js';
import type { SalesService } from './sales.parts.js';
import { personReceipt } from './sales.responses.js';
import type { CreateSalesBody, UpdateSalesBody } from './sales.schema.js';
import type { SalesRelations } from './sales.snapshot.js';

/** Decision 0181. */
export const BATCH_MAX_ITEMS = 100;

const BATCH_MODES = ['create', 'upsert'] as const;
type BatchMode = (typeof BATCH_MODES)[number];

/** Only the envelope is checked here; each item is checked alone so one bad item fails alone. */
export const batchBody = (kind: string) =>
  z.strictObject({
    mode: z
      .enum(BATCH_MODES, { message: 'must be create or upsert' })
      .default('create')
      .meta({ description: 'create (the default): every item creates; upsert: an item whose external_id names a live record updates it.' }),
    items: z
      .array(
        z.looseObject({}).meta({
          description: `The body of POST /${kind}s (idempotency_key included), checked on its own: a bad item fails alone.`,
        }),
      )
      .min(1, `must hold 1 to ${BATCH_MAX_ITEMS} items`)
      .max(BATCH_MAX_ITEMS, `must hold 1 to ${BATCH_MAX_ITEMS} items`),
  });

const errorSchema = z
  .object({ statusCode: z.number().int(), message: z.string(), error: z.string(), details: z.looseObject({}).optional() })
  .meta({ description: 'The error body the single route would have answered.' });

export const batchResult = z
  .object({
    index: z.number().int().meta({ description: 'The item’s position in `items`, from 0.' }),
    status: z.number().int().meta({ description: 'The status the single route would have answered: 201, 200, or the error’s.' }),
    id: z.uuid().optional(),
    code: z.number().int().optional(),
    action: z.enum(['created', 'updated', 'unchanged', 'failed']),
    person: personReceipt.optional(),
    persons: z.array(personReceipt).optional(),
    error: errorSchema.optional(),
  })
  .meta({ id: 'BatchItemResult' });

export const batchAnswer = z.object({ results: z.array(batchResult) }).meta({ id: 'BatchResponse' });
export type BatchResult = z.infer<typeof batchResult>;

const isExternalIdConflict = (err: unknown) => err instanceof AppError && err.kind === 'conflict' && err.message.startsWith('external_id:');

const CREATION_ONLY = ['followers', 'note', 'measurement_consent'] as const;

/** An upsert item naming a live record: persons are linked, none removed; the idempotency key only guards a creation. */
export function updateOfItem(body: CreateSalesBody & { tags?: string[] | undefined }, tagsTaken: boolean, kind: string) {
  const { idempotency_key: _key, persons_id, tags, followers: _f, note: _n, measurement_consent: _m, ...shared } = body;
  if (tags !== undefined && !tagsTaken) throw invalidField('tags', `not taken when an upsert updates an existing ${kind}`);
  return {
    ...shared,
    ...(persons_id ? { persons_id: persons_id.map((person_id) => ({ person_id })) } : {}),
    ...(tags !== undefined ? { tags } : {}),
  };
}

interface BatchSchemas<CB, UB> {
  create: z.ZodType<CB, unknown>;
  update: z.ZodType<UB, unknown>;
  toUpdate: (body: CB) => Record<string, unknown>;
}

/** Items run in order, each in its own transaction through the single routes, so rules, keys and events are theirs (decision 0181). */
export async function runBatch<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody,
  UB extends UpdateSalesBody,
>(
  records: SalesService<R, Rel, S, CB, UB>,
  identity: Extract<Identity, { kind: 'integration' }>,
  body: { mode: BatchMode; items: Record<string, unknown>[] },
  schemas: BatchSchemas<CB, UB>,
): Promise<{ results: BatchResult[] }> {
  const { kind } = records;
  const canCreate = hasPermission(identity, `crm/${kind}.create`);
  const canUpdate = hasPermission(identity, `crm/${kind}.update`);
  // A key that could write none of the items is refused whole, before anything is read.
  if (body.mode === 'create' && !canCreate) throw forbidden(`The key lacks the permission crm/${kind}.create`);
  if (!canCreate && !canUpdate) throw forbidden(`The key lacks the permissions crm/${kind}.create and crm/${kind}.update`);
  const update = async (index: number, item: CB, id: string): Promise<BatchResult> => {
    if (!canUpdate) throw forbidden(`The key lacks the permission crm/${kind}.update`);
    const sent = CREATION_ONLY.find((f) => item[f] !== undefined);
    if (sent) throw invalidField(sent, `not taken when an upsert updates an existing ${kind}`);
    const { answer, changed } = await records.updates.apply(identity, id, parse(schemas.update, schemas.toUpdate(item)));
    return { index, status: 200, id: answer.id, code: answer.code, action: changed ? 'updated' : 'unchanged' };
  };
  const create = async (index: number, item: CB): Promise<BatchResult> => {
    if (!canCreate) throw forbidden(`The key lacks the permission crm/${kind}.create`);
    const created: CreationAnswer = await records.creation.create(identity, item);
    return {
      index,
      status: 201,
      id: created.id,
      code: created.code,
      action: 'created',
      ...(created.person ? { person: created.person } : {}),
      ...(created.persons ? { persons: created.persons } : {}),
    };
  };
  const upsert = async (index: number, item: CB, externalId: string): Promise<BatchResult> => {
    const existing = await records.refs.externalIdOf(identity.companyId, externalId);
    if (existing) return update(index, item, existing);
    try {
      return await create(index, item);
    } catch (err) {
      // Another request created a record with this external id meanwhile: the upsert updates it instead.
      const holder = isExternalIdConflict(err) ? await records.refs.externalIdOf(identity.companyId, externalId) : null;
      if (!holder) throw err;
      return update(index, item, holder);
    }
  };
  const results: BatchResult[] = [];
  for (const [index, raw] of body.items.entries()) {
    try {
      const item = parse(schemas.create, raw);
      results.push(body.mode === 'upsert' && item.external_id ? await upsert(index, item, item.external_id) : await create(index, item));
    } catch (err) {
      const e = toAppError(err, records.logger, { method: 'POST', path: `/${kind}s/batch` });
      const error = errorBodyOf(e);
      results.push({ index, status: error.statusCode, action: 'failed', error });
    }
  }
  return { results };
}
