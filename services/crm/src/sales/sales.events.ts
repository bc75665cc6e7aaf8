import { changesSchema } from '@svc/platform/events/changes';
import { type EventContract, event } from '@svc/platform/http/contract';
import { z } from 'zod';
import { SALES_CHANGE_RULES } from './sales.changes.js';
import {
  customFieldChange,
  dealSnapshotSchema,
  leadSnapshotSchema,
  namedSummary,
  removedCustomField,
  stageSummary,
  tagSummary,
  userSummary,
} from './sales.responses.js';

/** Webhook payload schemas for the OpenAPI document (decision 0100). */
const dateTime = z.string().meta({ format: 'date-time' });
const quality = {
  previous_quality: z.number().int().nullable(),
  previous_quality_reason: z.string().nullable(),
  new_quality: z.number().int().nullable(),
  new_quality_reason: z.string().nullable(),
};

function salesEvents<K extends 'lead' | 'deal'>(
  kind: K,
  snapshot: z.ZodObject,
  created: z.ZodRawShape,
  won: z.ZodRawShape,
): EventContract[] {
  const Kind = kind === 'lead' ? 'Lead' : 'Deal';
  // Every event of a change of an existing record carries what it changed (decision 0178); a creation does not.
  const changes = { changes: changesSchema(snapshot, SALES_CHANGE_RULES, `${Kind}Changes`).optional() };
  const wrap = (shape: z.ZodRawShape, name: string) =>
    z.object({ [kind]: snapshot, ...shape, ...(name === 'Created' ? {} : changes) }).meta({ id: `${Kind}${name}Payload` });
  return [
    event({ key: `${kind}.created`, summary: `A ${kind} was created`, payload: wrap(created, 'Created') }),
    event({
      key: `${kind}.updated`,
      summary: `A ${kind}'s data changed (the payload is the ${Kind}Snapshot itself, plus changes)`,
      payload: z.object({ ...snapshot.shape, ...changes }).meta({ id: `${Kind}UpdatedPayload` }),
    }),
    event({
      key: `${kind}.stage_changed`,
      summary: `A ${kind} moved to another stage`,
      payload: wrap({ previous_stage: stageSummary, current_stage: stageSummary.nullable() }, 'StageChanged'),
    }),
    event({ key: `${kind}.won`, summary: `A ${kind} was marked won`, payload: wrap(won, 'Won') }),
    event({
      key: `${kind}.lost`,
      summary: `A ${kind} was marked lost`,
      payload: wrap(
        {
          lost_date: dateTime.nullable(),
          lost_by: userSummary.nullable(),
          loss_reason: namedSummary.nullable(),
          loss_reasons: z.array(namedSummary),
          loss_reason_description: z.string().nullable(),
        },
        'Lost',
      ),
    }),
    event({
      key: `${kind}.tag_added`,
      summary: 'Tags were added by the dedicated action',
      payload: wrap({ added_tags: z.array(tagSummary) }, 'TagAdded'),
    }),
    event({
      key: `${kind}.tag_removed`,
      summary: 'A tag was removed by the dedicated action',
      payload: wrap({ removed_tags: z.array(tagSummary) }, 'TagRemoved'),
    }),
    event({
      key: `${kind}.custom_field_updated`,
      summary: 'Custom field answers were created or changed',
      payload: wrap({ custom_fields_changed: z.array(customFieldChange) }, 'CustomFieldUpdated'),
    }),
    event({
      key: `${kind}.custom_field_removed`,
      summary: 'Custom field answers were removed',
      payload: wrap({ removed_fields: z.array(removedCustomField) }, 'CustomFieldRemoved'),
    }),
    event({ key: `${kind}.quality_updated`, summary: 'The qualification was set or changed', payload: wrap(quality, 'QualityUpdated') }),
  ];
}

const createdExtras = { custom_fields_changed: z.array(customFieldChange).optional() };

export const crmEvents: readonly EventContract[] = [
  ...salesEvents(
    'lead',
    leadSnapshotSchema,
    {
      ...createdExtras,
      previous_quality: quality.previous_quality.optional(),
      previous_quality_reason: quality.previous_quality_reason.optional(),
      new_quality: quality.new_quality.optional(),
      new_quality_reason: quality.new_quality_reason.optional(),
    },
    { won_date: dateTime.nullable(), won_by: userSummary.nullable(), deal: dealSnapshotSchema.nullable() },
  ),
  ...salesEvents('deal', dealSnapshotSchema, createdExtras, {
    won_date: dateTime.nullable(),
    won_by: userSummary.nullable(),
    customer_id: z.string().nullable().meta({
      description:
        'The customer the win found or made of the deal’s organization, else of its main person (admin API `GET /companies/{cid}/customers/{id}`); null when the deal has neither.',
    }),
    gain_reason: namedSummary.nullable(),
    gain_reasons: z.array(namedSummary),
    won_reason_description: z.string().nullable(),
  }),
];
