import { changesSchema } from '@svc/platform/events/changes';
import { type EventContract, event } from '@svc/platform/http/contract';
import { z } from 'zod';
import { recordSummary } from '../deliveries/delivery.events.js';
import { userSummary } from '../sales/sales.responses.js';
import { CONTRACT_CHANGE_RULES } from './contract.snapshot.js';

/** ContractSnapshot and the contract.* payloads as schemas (docs/webhooks/contract-events.md), for the OpenAPI webhooks. */
const uuid = z.string().meta({ format: 'uuid' });
const dateTime = z.string().meta({ format: 'date-time' });
const date = z.string().meta({ format: 'date' });
const user = userSummary.nullable();

export const contractSnapshotSchema = z
  .object({
    id: uuid,
    code: z.number().int(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.number().int().meta({ description: '1 active, 2 canceled, 3 completed' }),
    value: z.number().nullable(),
    start_date: date,
    end_date: date.nullable(),
    company_id: uuid,
    deal: recordSummary.nullable(),
    delivery: recordSummary.nullable(),
    organization: z.object({ id: uuid, name: z.string(), logo: z.string().nullable() }).nullable(),
    person: z.object({ id: uuid, name: z.string() }).nullable(),
    responsible: user,
    created_by: user,
    renewal_count: z.number().int(),
    last_renewed_at: dateTime.nullable(),
    renewals: z.array(
      z.object({
        renewed_at: dateTime,
        renewed_by: user,
        previous_end_date: date,
        new_end_date: date,
        previous_value: z.number().nullable(),
        new_value: z.number().nullable(),
      }),
    ),
    canceled_at: dateTime.nullable(),
    canceled_by: user,
    cancellation_reason: z.string().nullable(),
    completed_at: dateTime.nullable(),
    completed_by: user,
    created_at: dateTime,
    updated_at: dateTime,
  })
  .meta({ id: 'ContractSnapshot' });

/** What a change of a contract touched, on every contract event but contract.created (decision 0178). */
const changes = { changes: changesSchema(contractSnapshotSchema, CONTRACT_CHANGE_RULES, 'ContractChanges').optional() };
const payload = (id: string, shape: z.ZodRawShape) =>
  z.object({ contract: contractSnapshotSchema, ...shape, ...(id === 'ContractCreatedPayload' ? {} : changes) }).meta({ id });

export const contractEvents: readonly EventContract[] = [
  event({ key: 'contract.created', summary: 'A contract was created', payload: payload('ContractCreatedPayload', { created_by: user }) }),
  event({
    key: 'contract.updated',
    summary: 'A contract changed (by PATCH or after each dedicated action); changed_fields names what moved',
    payload: payload('ContractUpdatedPayload', { updated_by: user, changed_fields: z.array(z.string()) }),
  }),
  event({
    key: 'contract.canceled',
    summary: 'A contract was canceled',
    payload: payload('ContractCanceledPayload', {
      canceled_by: user,
      canceled_at: dateTime.nullable(),
      cancellation_reason: z.string().nullable(),
    }),
  }),
  event({
    key: 'contract.renewed',
    summary: "A contract's period was extended",
    payload: payload('ContractRenewedPayload', {
      renewed_by: user,
      renewed_at: dateTime.nullable(),
      previous_end_date: date.nullable(),
      new_end_date: date.nullable(),
      previous_value: z.number().nullable(),
      new_value: z.number().nullable(),
      renewal_count: z.number().int(),
    }),
  }),
  event({
    key: 'contract.completed',
    summary: 'A contract was completed',
    payload: payload('ContractCompletedPayload', { completed_by: user, completed_at: dateTime.nullable() }),
  }),
];
