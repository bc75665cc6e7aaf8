import { changesSchema } from '@svc/platform/events/changes';
import { type EventContract, event } from '@svc/platform/http/contract';
import { z } from 'zod';
import { stageSummary, userSummary } from '../sales/sales.responses.js';
import { DELIVERY_CHANGE_RULES } from './delivery.snapshot.js';

/** DeliverySnapshot and the delivery.* payloads as schemas (docs/webhooks/delivery-events.md), for the OpenAPI webhooks. */
const uuid = z.string().meta({ format: 'uuid' });
const dateTime = z.string().meta({ format: 'date-time' });
export const recordSummary = z
  .object({ id: uuid, code: z.number().int(), title: z.string(), status: z.number().int() })
  .meta({ id: 'RecordStatusSummary' });

export const deliverySnapshotSchema = z
  .object({
    id: uuid,
    code: z.number().int(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.number().int().meta({ description: '1 not started, 2 in progress, 3 delivered, 4 cancelled' }),
    planned_start_date: dateTime.nullable(),
    planned_end_date: dateTime.nullable(),
    started_at: dateTime.nullable(),
    delivered_at: dateTime.nullable(),
    cancelled_at: dateTime.nullable(),
    cancellation_reason: z.string().nullable(),
    created_at: dateTime,
    updated_at: dateTime,
    company_id: uuid,
    pipeline_id: uuid,
    stage_id: uuid,
    stage: stageSummary.nullable(),
    responsible: userSummary.nullable(),
    created_by: userSummary.nullable(),
    completed_by: userSummary.nullable(),
    deal: recordSummary.nullable(),
    organization: z.object({ id: uuid, name: z.string(), logo: z.string().nullable() }).nullable(),
    person: z.object({ id: uuid, name: z.string() }).nullable(),
  })
  .meta({ id: 'DeliverySnapshot' });

/** What a change of a delivery touched, on every delivery event but delivery.created (decision 0178). */
const changes = { changes: changesSchema(deliverySnapshotSchema, DELIVERY_CHANGE_RULES, 'DeliveryChanges').optional() };

export const deliveryEvents: readonly EventContract[] = [
  event({
    key: 'delivery.created',
    summary: 'A delivery was created',
    payload: z.object({ delivery: deliverySnapshotSchema, created_by: userSummary.nullable() }).meta({ id: 'DeliveryCreatedPayload' }),
  }),
  event({
    key: 'delivery.updated',
    summary: "A delivery's data changed (the payload is the DeliverySnapshot itself, plus changes)",
    payload: z.object({ ...deliverySnapshotSchema.shape, ...changes }).meta({ id: 'DeliveryUpdatedPayload' }),
  }),
  event({
    key: 'delivery.stage_changed',
    summary: 'A delivery moved to another stage',
    payload: z
      .object({
        previous_stage: stageSummary.nullable(),
        current_stage: stageSummary.nullable(),
        delivery: deliverySnapshotSchema,
        moved_by: userSummary.nullable(),
        ...changes,
      })
      .meta({ id: 'DeliveryStageChangedPayload' }),
  }),
  event({
    key: 'delivery.completed',
    summary: 'A delivery was completed (delivered)',
    payload: z
      .object({ delivery: deliverySnapshotSchema, completed_by: userSummary.nullable(), delivered_at: dateTime.nullable(), ...changes })
      .meta({ id: 'DeliveryCompletedPayload' }),
  }),
];
