import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { NewEvent } from './payloads.js';

/** Null where an element is absent. */
export interface FieldChange {
  from: unknown;
  to: unknown;
}

export type FieldChanges = Record<string, FieldChange | Record<string, FieldChange>>;

/**
 * Shared by the diff and the schema so the document says what events carry (decision 0178): `ignore` fields that move
 * with every change or are not the record's own; `byId` arrays compared per element id.
 */
export interface ChangeRules {
  ignore?: readonly string[];
  byId?: Readonly<Record<string, string>>;
}

type Json = Record<string, unknown>;

// As jsonb will store it, so equal means equal to a subscriber.
const asJson = (value: object): Json => JSON.parse(JSON.stringify(value)) as Json;

function elementsById(list: unknown, idField: string): Map<string, unknown> {
  const byId = new Map<string, unknown>();
  for (const item of Array.isArray(list) ? list : []) {
    const id = (item as Json | null)?.[idField];
    if (typeof id === 'string') byId.set(id, item);
  }
  return byId;
}

/** Deep equality on the JSON the events carry: fields set to the value they had are not changes. */
export function changesBetween(before: object, after: object, rules: ChangeRules = {}): FieldChanges {
  const was = asJson(before);
  const now = asJson(after);
  const ignored = new Set(rules.ignore ?? []);
  const changes: FieldChanges = {};
  for (const field of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (ignored.has(field)) continue;
    const idField = rules.byId?.[field];
    if (idField) {
      const a = elementsById(was[field], idField);
      const b = elementsById(now[field], idField);
      const moved: Record<string, FieldChange> = {};
      for (const id of new Set([...a.keys(), ...b.keys()])) {
        const from = a.get(id) ?? null;
        const to = b.get(id) ?? null;
        if (!isDeepStrictEqual(from, to)) moved[id] = { from, to };
      }
      if (Object.keys(moved).length) changes[field] = moved;
      continue;
    }
    const from = was[field] ?? null;
    const to = now[field] ?? null;
    if (!isDeepStrictEqual(from, to)) changes[field] = { from, to };
  }
  return changes;
}

/** The one place a change's before and after snapshots become what subscribers read. */
export function withChanges<E extends NewEvent>(events: readonly E[], before: object, after: object, rules: ChangeRules = {}): E[] {
  const changes = changesBetween(before, after, rules);
  return events.map((e) => ({ ...e, payload: { ...e.payload, changes } }) as E);
}

export function changesSchema(snapshot: z.ZodObject, rules: ChangeRules, id: string) {
  const ignored = new Set(rules.ignore ?? []);
  const shape: Record<string, z.ZodType> = {};
  for (const [field, schema] of Object.entries(snapshot.shape)) {
    if (ignored.has(field)) continue;
    if (rules.byId?.[field] && schema instanceof z.ZodArray) {
      const element = (schema.element as z.ZodType).nullable();
      shape[field] = z
        .record(z.string(), z.object({ from: element, to: element }))
        .optional()
        .meta({ description: `Per ${rules.byId[field]}: the element before and after (null where absent)` });
      continue;
    }
    const value = schema as z.ZodType;
    shape[field] = z.object({ from: value, to: value }).optional();
  }
  return z
    .object(shape)
    .meta({ id, description: 'What this change touched: each field before and after, in the snapshot’s shapes (decision 0178)' });
}
