import { invalidField } from '@svc/platform/errors';
import type { MediaSource, TemplateComponent, TemplateParameter } from './provider.js';

/** `index` is the placeholder number ({{1}} is 1), sent in its order; errors name the field, e.g. `template_fields[1].type`. */
export interface TemplateField {
  component: string;
  type?: string;
  value: string;
  index?: number;
  button_index?: number;
  card_index?: number;
}

const MEDIA = new Set(['IMAGE', 'VIDEO', 'DOCUMENT']);

interface Slot {
  component: TemplateComponent;
  ordered: { index: number; order: number; parameter: TemplateParameter }[];
}

export function templateFieldsToComponents(fields: TemplateField[], headerFile?: MediaSource): TemplateComponent[] {
  const top = new Map<string, Slot>();
  const cards = new Map<number, Map<string, Slot>>();

  fields.forEach((field, i) => {
    const at = `template_fields[${i}]`;
    const component = field.component.toUpperCase();
    const type = (field.type ?? 'TEXT').toUpperCase();
    let key: string;
    let parameter: TemplateParameter;
    let make: () => TemplateComponent;
    if (component === 'HEADER') {
      if (type === 'TEXT') parameter = { type: 'text', text: field.value };
      else if (MEDIA.has(type)) parameter = { type: type.toLowerCase() as 'image', media: { from: 'url', url: mediaUrl(field.value, at) } };
      else throw invalidField(`${at}.type`, 'HEADER takes TEXT, IMAGE, VIDEO or DOCUMENT');
      key = 'header';
      make = () => ({ type: 'header', parameters: [] });
    } else if (component === 'BODY') {
      if (type !== 'TEXT') throw invalidField(`${at}.type`, 'BODY takes TEXT');
      parameter = { type: 'text', text: field.value };
      key = 'body';
      make = () => ({ type: 'body', parameters: [] });
    } else if (component === 'BUTTON') {
      const index = field.button_index;
      if (index === undefined) throw invalidField(`${at}.button_index`, 'is required for a BUTTON field');
      if (type === 'PAYLOAD') parameter = { type: 'payload', payload: field.value };
      else if (type === 'TEXT') parameter = { type: 'text', text: field.value };
      else throw invalidField(`${at}.type`, 'BUTTON takes PAYLOAD (quick reply) or TEXT (URL button)');
      key = `button:${index}`;
      const subType = type === 'PAYLOAD' ? 'quick_reply' : 'url';
      make = () => ({ type: 'button', subType, index, parameters: [] });
    } else {
      throw invalidField(`${at}.component`, 'must be HEADER, BODY or BUTTON');
    }

    let slots = top;
    if (field.card_index !== undefined) {
      slots = cards.get(field.card_index) ?? new Map();
      cards.set(field.card_index, slots);
    }
    const slot = slots.get(key) ?? { component: make(), ordered: [] };
    if (slot.component.type === 'button' && slot.component.subType !== (type === 'PAYLOAD' ? 'quick_reply' : 'url')) {
      throw invalidField(`${at}.type`, `button ${field.button_index} mixes PAYLOAD and TEXT`);
    }
    slot.ordered.push({ index: field.index ?? Number.MAX_SAFE_INTEGER, order: i, parameter });
    slots.set(key, slot);
  });

  if (headerFile) {
    if (top.has('header')) throw invalidField('template_fields', 'a HEADER field and an attached header file cannot both be sent');
    const kind = headerKindOf(headerFile);
    top.set('header', {
      component: { type: 'header', parameters: [] },
      ordered: [{ index: 0, order: 0, parameter: { type: kind, media: headerFile } }],
    });
  }

  const built = finish(top);
  if (cards.size > 0) {
    const byCard = [...cards.entries()].sort(([a], [b]) => a - b).map(([cardIndex, slots]) => ({ cardIndex, components: finish(slots) }));
    built.push({ type: 'carousel', parameters: [], cards: byCard });
  }
  return built;
}

const ORDER = { header: 0, body: 1, button: 2, carousel: 3 };

function finish(slots: Map<string, Slot>): TemplateComponent[] {
  return [...slots.values()]
    .map(({ component, ordered }) => ({
      ...component,
      parameters: ordered.sort((a, b) => a.index - b.index || a.order - b.order).map((o) => o.parameter),
    }))
    .sort((a, b) => ORDER[a.type] - ORDER[b.type] || (a.index ?? 0) - (b.index ?? 0));
}

function mediaUrl(value: string, at: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'https:' || url.protocol === 'http:') return value;
  } catch {
    // Falls through to the refusal below.
  }
  throw invalidField(`${at}.value`, 'header media must be an http(s) URL');
}

function headerKindOf(file: MediaSource): 'image' | 'video' | 'document' {
  const mime = file.from === 'stream' ? file.mimeType : '';
  if (mime.startsWith('image/')) return 'image';
  if (mime.startsWith('video/')) return 'video';
  return 'document';
}
