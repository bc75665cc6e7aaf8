import { type Part, PDF_BYTES } from '../support/files.js';
import type { Kind } from './support/world.js';

type Ids = Record<Kind, string>;

/**
 * Every route of the external API, as the tenancy, permission and bad-input tests generate their cases from it.
 * A route served by the gateway without a row here fails `coverage.test.ts`: add its row (method, path with
 * `{kind}` for each id in it, permission, a valid body or query for the tenant, and which body and query fields
 * hold ids of which kind), and every generated case covers it without new test code.
 */
export interface RouteRow {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under /integrations/external; `{lead}` stands for the id of a record of kind `lead`. */
  path: string;
  permission: string;
  /**
   * A body the tenant's own ids make valid (2xx). `field` is the id field a case is about to change, for bodies
   * whose fields exclude each other (a task links one record at most).
   */
  body?: (ids: Ids, field?: string) => Record<string, unknown>;
  /** A query the tenant's own ids make valid. */
  query?: (ids: Ids) => Record<string, string>;
  /** Body fields holding ids, as a dotted path into `body` (`tags.0`, `followers.0.user_id`) → the kind named. */
  bodyIds?: Record<string, Kind>;
  /** Query parameters holding ids → the kind named. */
  queryIds?: Record<string, Kind>;
  /** A multipart body the tenant's own ids make valid (an upload): sent instead of `body`. */
  parts?: (ids: Ids) => Part[];
  /**
   * The multipart form of a route that takes JSON too (its `body` stays the JSON one): the bad-input cases of
   * multipart are generated from it. Every operation the OpenAPI document gives a multipart body has `parts` or this.
   */
  multipart?: (ids: Ids) => Part[];
  /** Answers a page `{total, records, ...}` or an array. */
  list?: boolean;
  /**
   * False for a route whose valid request needs what the world does not set up (a provider on the other side, a
   * message sent): its id and permission cases still run, the case that proves the own request answers 2xx does not.
   */
  baseline?: false;
}

const probeFile: Part = { name: 'file', filename: 'probe.pdf', contentType: 'application/pdf', data: PDF_BYTES };

const leadBody = (ids: Ids) => ({
  title: 'Tenancy probe',
  stage_id: ids.stage,
  responsible_id: ids.user,
  tags: [ids.tag],
  persons_id: [ids.person],
  organization_id: ids.organization,
  crm_lead_source_id: ids.lead_source,
  followers: [{ user_id: ids.user, role_id: ids.follower_role }],
});
const leadBodyIds: Record<string, Kind> = {
  stage_id: 'stage',
  responsible_id: 'user',
  'tags.0': 'tag',
  'persons_id.0': 'person',
  organization_id: 'organization',
  crm_lead_source_id: 'lead_source',
  'followers.0.user_id': 'user',
  'followers.0.role_id': 'follower_role',
};
const updateBody = (ids: Ids) => ({
  title: 'Tenancy probe updated',
  stage_id: ids.stage,
  responsible_id: ids.user,
  persons_id: [{ person_id: ids.person }],
  organization_id: ids.organization,
  crm_lead_source_id: ids.lead_source,
});
const updateBodyIds: Record<string, Kind> = {
  stage_id: 'stage',
  responsible_id: 'user',
  'persons_id.0.person_id': 'person',
  organization_id: 'organization',
  crm_lead_source_id: 'lead_source',
};
const salesListIds: Record<string, Kind> = {
  stage_id: 'stage',
  tag_id: 'tag',
  person_id: 'person',
  pipeline_id: 'pipeline',
  responsible_id: 'user',
};
/** A task links one record at most: the one the case is about, else the lead. */
const TASK_LINKS = { crm_lead_id: 'lead', crm_deal_id: 'deal', crm_person_id: 'person', crm_organization_id: 'organization' } as const;
const taskBody = (ids: Ids, field?: string) => {
  const link = field && field in TASK_LINKS ? (field as keyof typeof TASK_LINKS) : 'crm_lead_id';
  return {
    title: 'Tenancy probe',
    crm_task_type_id: ids.task_type,
    crm_task_stage_id: ids.task_stage,
    responsible_id: ids.user,
    [link]: ids[TASK_LINKS[link]],
    parent_task_id: ids.task,
    tags: [ids.tag],
    start_date: '2030-01-02T10:00:00Z',
  };
};
const taskBodyIds: Record<string, Kind> = {
  crm_task_type_id: 'task_type',
  crm_task_stage_id: 'task_stage',
  responsible_id: 'user',
  crm_lead_id: 'lead',
  crm_deal_id: 'deal',
  crm_person_id: 'person',
  crm_organization_id: 'organization',
  parent_task_id: 'task',
  'tags.0': 'tag',
};

export const ROUTES: RouteRow[] = [
  { method: 'POST', path: '/leads', permission: 'crm/lead.create', body: leadBody, bodyIds: leadBodyIds },
  {
    method: 'GET',
    path: '/leads',
    permission: 'crm/lead.read',
    list: true,
    queryIds: { ...salesListIds, lead_source_id: 'lead_source' },
  },
  { method: 'GET', path: '/leads/{lead}', permission: 'crm/lead.read' },
  { method: 'PUT', path: '/leads/{lead}', permission: 'crm/lead.update', body: updateBody, bodyIds: updateBodyIds },
  { method: 'POST', path: '/deals', permission: 'crm/deal.create', body: leadBody, bodyIds: leadBodyIds },
  // A batch answers 200 with a result per item (an item's foreign id fails that item, decision 0181): its id cases
  // are the single route's; here its envelope and permission.
  {
    method: 'POST',
    path: '/leads/batch',
    permission: 'crm/lead.create',
    body: () => ({ mode: 'create', items: [{ title: 'Batch probe' }] }),
  },
  {
    method: 'POST',
    path: '/deals/batch',
    permission: 'crm/deal.create',
    body: () => ({ mode: 'create', items: [{ title: 'Batch probe' }] }),
  },
  {
    method: 'GET',
    path: '/deals',
    permission: 'crm/deal.read',
    list: true,
    queryIds: { ...salesListIds, deal_source_id: 'lead_source' },
  },
  { method: 'GET', path: '/deals/{deal}', permission: 'crm/deal.read' },
  {
    method: 'PUT',
    path: '/deals/{deal}',
    permission: 'crm/deal.update',
    body: (ids) => ({ ...updateBody(ids), tags: [ids.tag] }),
    bodyIds: { ...updateBodyIds, 'tags.0': 'tag' },
  },
  { method: 'GET', path: '/custom-fields', permission: 'crm/custom-fields.read', list: true, query: () => ({ entity: 'lead' }) },
  { method: 'POST', path: '/tasks', permission: 'crm/task.create', body: taskBody, bodyIds: taskBodyIds },
  {
    method: 'GET',
    path: '/tasks',
    permission: 'crm/task.read',
    list: true,
    queryIds: {
      crm_lead_id: 'lead',
      crm_deal_id: 'deal',
      crm_person_id: 'person',
      crm_organization_id: 'organization',
      responsible_id: 'user',
      crm_task_type_id: 'task_type',
      crm_task_stage_id: 'task_stage',
      parent_task_id: 'task',
      tag_id: 'tag',
    },
  },
  { method: 'GET', path: '/tasks/{task}', permission: 'crm/task.read' },
  {
    method: 'PUT',
    path: '/tasks/{task}',
    permission: 'crm/task.update',
    body: (ids, field) => {
      const { parent_task_id: _parent, ...rest } = taskBody(ids, field);
      return rest;
    },
    bodyIds: Object.fromEntries(Object.entries(taskBodyIds).filter(([k]) => k !== 'parent_task_id')),
  },
  { method: 'DELETE', path: '/tasks/{task}', permission: 'crm/task.delete' },
  { method: 'GET', path: '/chats', permission: 'crm/chats.read', list: true },
  { method: 'POST', path: '/chats', permission: 'crm/chats.create', baseline: false },
  { method: 'GET', path: '/chats/unread-summary', permission: 'crm/chats.read' },
  { method: 'GET', path: '/chats/{chat}', permission: 'crm/chats.read' },
  { method: 'GET', path: '/chats/{chat}/assignable-agents', permission: 'crm/chats.read' },
  { method: 'GET', path: '/chats/{chat}/messages', permission: 'crm/chats.read' },
  {
    method: 'POST',
    path: '/chats/{chat}/messages',
    permission: 'crm/chats.write',
    baseline: false,
    multipart: () => [{ name: 'body', value: 'Tenancy probe' }, probeFile],
  },
  {
    method: 'POST',
    path: '/chats/{chat}/messages/typing',
    permission: 'crm/chats.write',
    body: () => ({ is_typing: false }),
    baseline: false,
  },
  { method: 'DELETE', path: '/chats/{chat}/messages/{message}', permission: 'crm/chats.delete' },
  { method: 'POST', path: '/chats/{chat}/read', permission: 'crm/chats.update' },
  {
    method: 'PATCH',
    path: '/chats/{chat}/responsible',
    permission: 'crm/chats.update',
    body: (ids) => ({ user_id: ids.user }),
    bodyIds: { user_id: 'user' },
  },
  { method: 'DELETE', path: '/chats/{chat}/participants/{user}', permission: 'crm/chats.update', baseline: false },
  { method: 'GET', path: '/chats/{chat}/templates', permission: 'crm/chats.read', baseline: false },
  { method: 'GET', path: '/chats/{chat}/scheduled-messages', permission: 'crm/chats.read' },
  {
    method: 'POST',
    path: '/chats/{chat}/scheduled-messages',
    permission: 'crm/chats.write',
    body: () => ({ scheduled_at: new Date(Date.now() + 7_200_000).toISOString(), body: 'Tenancy probe' }),
    multipart: () => [
      { name: 'scheduled_at', value: new Date(Date.now() + 7_200_000).toISOString() },
      { name: 'body', value: 'Tenancy probe' },
      probeFile,
    ],
  },
  { method: 'POST', path: '/chats/{chat}/scheduled-messages/{scheduled_message}/cancel', permission: 'crm/chats.write', baseline: false },
  { method: 'POST', path: '/satisfaction/links', permission: 'crm/satisfaction.write', baseline: false },
  // Files and proposals: the world has a file of its lead, a proposal of it with a file attached, and a document of
  // the company's library (decision 0078).
  {
    method: 'POST',
    path: '/files',
    permission: 'crm/files.write',
    parts: (ids) => [{ name: 'crm_lead_id', value: ids.lead }, probeFile],
  },
  {
    method: 'GET',
    path: '/files',
    permission: 'crm/files.read',
    query: (ids) => ({ crm_lead_id: ids.lead }),
    queryIds: { crm_lead_id: 'lead' },
  },
  { method: 'GET', path: '/files/{file}', permission: 'crm/files.read' },
  { method: 'DELETE', path: '/files/{file}', permission: 'crm/files.write' },
  {
    method: 'GET',
    path: '/proposals',
    permission: 'crm/proposals.read',
    query: (ids) => ({ crm_lead_id: ids.lead }),
    queryIds: { crm_lead_id: 'lead' },
  },
  {
    method: 'POST',
    path: '/proposals',
    permission: 'crm/proposals.write',
    body: (ids) => ({ crm_lead_id: ids.lead, title: 'Tenancy probe' }),
    bodyIds: { crm_lead_id: 'lead' },
  },
  { method: 'GET', path: '/proposals/{proposal}', permission: 'crm/proposals.read' },
  { method: 'PUT', path: '/proposals/{proposal}', permission: 'crm/proposals.write', body: () => ({ title: 'Tenancy probe' }) },
  { method: 'DELETE', path: '/proposals/{proposal}', permission: 'crm/proposals.write' },
  { method: 'GET', path: '/proposals/{proposal}/attachments', permission: 'crm/proposals.read' },
  { method: 'POST', path: '/proposals/{proposal}/attachments', permission: 'crm/proposals.write', parts: () => [probeFile] },
  { method: 'DELETE', path: '/proposals/{proposal}/attachments/{attachment}', permission: 'crm/proposals.write' },
  {
    method: 'POST',
    path: '/proposals/{proposal}/documents',
    permission: 'crm/proposals.write',
    body: (ids) => ({ document_id: ids.document }),
    bodyIds: { document_id: 'document' },
  },
  // Webhook subscriptions under the key (decision 0175): the world has one, with a test delivery.
  {
    method: 'POST',
    path: '/webhooks',
    permission: 'crm/webhooks.write',
    body: () => ({ url: 'https://hooks.example.test/probe', events: ['webhook.disabled'] }),
  },
  { method: 'GET', path: '/webhooks', permission: 'crm/webhooks.read', list: true },
  { method: 'GET', path: '/webhooks/event-types', permission: 'crm/webhooks.read' },
  { method: 'GET', path: '/webhooks/{webhook}', permission: 'crm/webhooks.read' },
  { method: 'PATCH', path: '/webhooks/{webhook}', permission: 'crm/webhooks.write', body: () => ({ description: 'Tenancy probe' }) },
  { method: 'POST', path: '/webhooks/{webhook}/rotate-secret', permission: 'crm/webhooks.write' },
  { method: 'POST', path: '/webhooks/{webhook}/test', permission: 'crm/webhooks.write' },
  { method: 'GET', path: '/webhooks/{webhook}/deliveries', permission: 'crm/webhooks.read', list: true },
  { method: 'POST', path: '/webhooks/{webhook}/deliveries/{webhook_delivery}/redeliver', permission: 'crm/webhooks.write' },
  {
    method: 'POST',
    path: '/webhooks/{webhook}/replay',
    permission: 'crm/webhooks.write',
    body: () => ({ since: new Date(0).toISOString() }),
  },
  // Last: a fuzzed request may remove the world's subscription.
  { method: 'DELETE', path: '/webhooks/{webhook}', permission: 'crm/webhooks.write' },
];

/** The path params of a row, in order: `{lead}` → 'lead'. */
export const pathKinds = (row: RouteRow): Kind[] => [...row.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as Kind);

/** The row's path with the given tenant's ids filled in (or `over` for one kind). */
export function pathOf(row: RouteRow, ids: Ids, over: Partial<Ids> = {}): string {
  return `/integrations/external${row.path.replace(/\{(\w+)\}/g, (_, k: Kind) => over[k] ?? ids[k])}`;
}

/** A copy of `body` with the value at a dotted path replaced. */
export function withValueAt(body: Record<string, unknown>, dotted: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  const parts = dotted.split('.');
  let node: Record<string, unknown> | unknown[] = copy;
  for (const part of parts.slice(0, -1)) node = (node as Record<string, unknown>)[part] as Record<string, unknown>;
  (node as Record<string, unknown>)[parts.at(-1)!] = value;
  return copy;
}

/** `/leads/{lead}` → `item`, `/leads` → `collection`: the shapes the coverage probe tries. */
export const shapeOf = (path: string) => (path.split('/').length > 2 ? 'item' : 'collection');
