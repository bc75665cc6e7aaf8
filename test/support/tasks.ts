import { expect } from 'chai';
import { type CallResult, client } from './client.js';
import { adminOf, seedTenant, type Tenant } from './fixtures.js';
import { startStack } from './stack.js';

type Call = <T = any>(
  method: string,
  path: string,
  opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<CallResult<T>>;

/**
 * A tenant set up for tasks through the management API: task types (a call without a default duration, a
 * meeting of 30 minutes), stages (To do, Doing, an inactive one, Done as the completion stage), two tags, a
 * person, an organization, and leads of crm: one visible to the team, one private to the master user.
 */
export interface TaskTenant extends Tenant {
  types: { call: any; meeting: any };
  stages: { todo: any; doing: any; inactive: any; done: any };
  tags: { red: any; blue: any };
  person: any;
  organization: any;
  leads: { team: any; privateToMaster: any; ownPrivate: any };
  /** A second user with a key of their own (["*"]). */
  other: { user: any; key: any };
}

export async function seedTaskTenant(call: Call, adminToken: string, keyOptions: Record<string, unknown> = {}): Promise<TaskTenant> {
  const t = await seedTenant(call, adminToken, keyOptions);
  const admin = adminOf(call, adminToken);
  const made = async (path: string, body: unknown) => {
    const res = await admin('POST', `/companies/${t.company.id}${path}`, body);
    expect(res.status, `${path}: ${res.text}`).to.equal(201);
    return res.body;
  };
  const call_ = await made('/task-types', { name: 'Call', icon: 'phone' });
  const meeting = await made('/task-types', { name: 'Meeting', icon: 'calendar', is_meeting: true, default_duration_minutes: 30 });
  const todo = await made('/task-stages', { name: 'To do', color: '#999999' });
  const doing = await made('/task-stages', { name: 'Doing' });
  const inactive = await made('/task-stages', { name: 'Old', active: false });
  const done = await made('/task-stages', { name: 'Done', is_completion: true, color: '#00aa00' });
  const red = await made('/tags', { name: 'Red', color: { background: '#ff0000', foreground: '#ffffff' } });
  const blue = await made('/tags', { name: 'Blue' });
  const person = await made('/persons', { name: 'Ana Person', contacts: [{ type: 1, value: 'ana@example.test' }] });
  const organization = await made('/organizations', { name: 'Org', legal_name: 'Org Legal Ltd' });
  const other = await made('/users', { name: 'Other', email: `other-${t.company.id.slice(-8)}@example.test` });
  const otherKey = await made('/keys', { created_by_user_id: other.id, permissions: ['*'], rate_limit_per_minute: 100_000 });
  const masterKey = await made('/keys', { created_by_user_id: t.master.id, permissions: ['*'], rate_limit_per_minute: 100_000 });
  const lead = async (key: string, body: unknown) => {
    const res = await call('POST', '/integrations/external/leads', { token: key, body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const leads = {
    team: await lead(masterKey.key, { title: 'Team lead', visibility: 1 }),
    privateToMaster: await lead(masterKey.key, { title: 'Master private lead', visibility: 0 }),
    ownPrivate: await lead(t.key.key, { title: 'Own private lead', visibility: 0 }),
  };
  return {
    ...t,
    types: { call: call_, meeting },
    stages: { todo, doing, inactive, done },
    tags: { red, blue },
    person,
    organization,
    leads,
    other: { user: other, key: otherKey },
  };
}

export function tasksApi(call: Call, token: () => string) {
  const base = '/integrations/external/tasks';
  return {
    create: (body: unknown, key = token()) => call('POST', base, { token: key, body }),
    get: (id: string, key = token()) => call('GET', `${base}/${id}`, { token: key }),
    list: (query: Record<string, string | number | boolean> = {}, key = token()) => {
      const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
      return call('GET', `${base}${qs ? `?${qs}` : ''}`, { token: key });
    },
    update: (id: string, body: unknown, key = token()) => call('PUT', `${base}/${id}`, { token: key, body }),
    remove: (id: string, query = '', key = token()) => call('DELETE', `${base}/${id}${query}`, { token: key }),
  };
}

/** Every field of the spec's Task table (GET /tasks/{id}). */
export const TASK_FIELDS = [
  'id',
  'title',
  'description',
  'is_personal',
  'priority',
  'start_date',
  'end_date',
  'completed_at',
  'created_at',
  'updated_at',
  'has_time',
  'meeting_outcome',
  'meeting_outcome_notes',
  'ai_processed',
  'ai_status',
  'ai_error_log',
  'ai_last_action',
  'ai_generated',
  'crm_task_type_id',
  'crm_task_stage_id',
  'crm_lead_id',
  'crm_deal_id',
  'crm_delivery_id',
  'crm_person_id',
  'crm_organization_id',
  'crm_customer_id',
  'responsible_id',
  'parent_task_id',
  'recurrence_series_id',
  'recurrence_index',
  'recurrence_is_exception',
  'is_recurring',
  'recurrence',
  'created_by',
  'completed_by',
  'responsible',
  'crm_task_type',
  'crm_task_stage',
  'crm_lead',
  'crm_deal',
  'crm_delivery',
  'crm_person',
  'crm_organization',
  'crm_customer',
  'mentions',
  'recordings',
  'reminders_minutes',
  'meeting_link',
  'meeting_location',
  'meeting_description',
  'calendar_event_url',
  'meeting_participants',
  'meeting_provider',
  'provider',
  'meeting_mode',
  'sync_warning',
  'origin',
  'is_actionable',
  'hierarchy_level',
  'is_subtask',
  'parent_task',
  'subtasks',
  'tags',
  'calendar_lifecycle_status',
  'meeting_event',
  'meeting_sync',
  'sync',
  'meeting_attendees',
  'attendees',
  'meeting_can_manage_participants',
  'meeting_can_respond',
  'meeting_self_attendee_email',
  'meeting_self_response_status',
  'meeting_response',
  'meeting_recorder_sessions',
  'comments',
];

/** A stack with two task tenants, `a` (the one a test works as, through `api`) and `b`, whose tasks `a` must not see. */
export async function openTaskTenants() {
  const stack = await startStack();
  const call = client(stack.gatewayUrl).call;
  const a = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
  const b = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
  return { stack, call, admin: adminOf(call, stack.adminToken), a, b, api: tasksApi(call, () => a.key.key) };
}
