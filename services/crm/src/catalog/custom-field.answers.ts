/** Custom field answers, pure: the caller reads the fields and writes the rows. */
import { invalidField } from '@svc/platform/errors';
import { v7 as uuidv7 } from 'uuid';
import type { CustomField, CustomFieldOption, CustomFieldValue } from './catalog.entity.js';

export interface AnswerInput {
  id: string;
  value?: string | number | null | undefined;
  option_id?: string | null | undefined;
  option_ids?: string[] | null | undefined;
}

export interface FieldDefinition {
  field: CustomField;
  options: CustomFieldOption[];
}

/** What one answer does: replace the field's answers with `rows`, or clear them (`rows` empty). */
export interface AnswerPlan {
  field: FieldDefinition;
  rows: CustomFieldValue[];
}

const NUMBER = /^-?\d+(\.\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** An unknown or foreign field is a 400; so is a file field when `allowFiles` is false. */
export function planAnswer(
  fields: Map<string, FieldDefinition>,
  answer: AnswerInput,
  path: string,
  ctx: { companyId: string; recordId: string; at: Date; allowFiles: boolean },
): AnswerPlan {
  // `path` empty: the answer is the body itself (the admin action's), its fields named alone.
  const at = (field: string) => (path ? `${path}.${field}` : field);
  const def = fields.get(answer.id);
  if (!def) throw invalidField(`${at('id')}`, 'unknown custom field');
  const { field, options } = def;
  if (field.type === 'file' && !ctx.allowFiles) throw invalidField(`${at('id')}`, 'file fields are not accepted on this route');
  const row = (value: string | null, optionId: string | null): CustomFieldValue => ({
    id: uuidv7(),
    companyId: ctx.companyId,
    fieldId: field.id,
    recordId: ctx.recordId,
    optionId,
    value,
    createdAt: ctx.at,
  });
  const optionOf = (id: string, at: string) => {
    const option = options.find((o) => o.id === id);
    if (!option) throw invalidField(`${at}`, `unknown option of field ${field.name}`);
    return option;
  };
  const text = answer.value === null || answer.value === undefined ? '' : String(answer.value).trim();
  switch (field.type) {
    case 'select': {
      if (answer.option_ids?.length) throw invalidField(`${at('option_ids')}`, `field ${field.name} takes one option_id`);
      if (!answer.option_id) return { field: def, rows: [] };
      return { field: def, rows: [row(null, optionOf(answer.option_id, at('option_id')).id)] };
    }
    case 'multiselect': {
      const ids = answer.option_ids ?? (answer.option_id ? [answer.option_id] : []);
      if (new Set(ids).size !== ids.length) throw invalidField(`${at('option_ids')}`, 'must not repeat an option');
      return { field: def, rows: ids.map((id, i) => row(null, optionOf(id, at(`option_ids[${i}]`)).id)) };
    }
    default: {
      if (answer.option_id || answer.option_ids?.length)
        throw invalidField(`${at('value')}`, `field ${field.name} takes a value, not options`);
      if (!text) return { field: def, rows: [] };
      if (text.length > 10_000) throw invalidField(`${at('value')}`, 'must be at most 10000 characters');
      if (field.type === 'number' && !NUMBER.test(text)) throw invalidField(`${at('value')}`, `must be a number for field ${field.name}`);
      if (field.type === 'date' && (!DATE.test(text) || Number.isNaN(Date.parse(text)))) {
        throw invalidField(`${at('value')}`, `must be an ISO 8601 date for field ${field.name}`);
      }
      return { field: def, rows: [row(text, null)] };
    }
  }
}
