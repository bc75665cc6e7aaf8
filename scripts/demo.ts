/**
 * The demo company of a local stack, created through the management API (/admin/v1) the first time:
 * master user, integration user, a key with every permission, a primary pipeline and the reference data
 * a lead, a deal or a task can point at.
 */
import type { DemoRecord } from './dev-secrets.js';

export class AdminApiError extends Error {
  override name = 'AdminApiError';
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${method} /admin/v1${path}: ${status} ${body.slice(0, 500)}`);
  }
}

export class AdminClient {
  constructor(
    readonly gatewayUrl: string,
    private readonly adminToken: string,
  ) {}

  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.gatewayUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${this.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed as T };
  }

  /** POST that must answer 200/201. */
  async create<T = { id: string }>(path: string, body: unknown): Promise<T> {
    const res = await this.call<T>('POST', path, body);
    if (res.status !== 200 && res.status !== 201) throw new AdminApiError('POST', path, res.status, JSON.stringify(res.body ?? null));
    return res.body;
  }
}

interface Created {
  id: string;
}

/** Creates the demo company and everything in it; returns what `npm start` records. */
export async function seedDemo(admin: AdminClient, database: string, say: (text: string) => void = () => undefined): Promise<DemoRecord> {
  const company = await admin.create<Created & { master_user: Created }>('/companies', {
    name: 'Demo Company',
    master_user: { name: 'Demo Master', email: 'master@demo.example.com' },
  });
  const cid = company.id;
  say(`demo company ${cid} created`);
  const base = `/companies/${cid}`;
  const integrationUser = await admin.create<Created>(`${base}/users`, { name: 'Demo Integration', email: 'integration@demo.example.com' });
  const key = await admin.create<Created & { key: string }>(`${base}/keys`, { created_by_user_id: integrationUser.id, permissions: ['*'] });
  const pipeline = await admin.create<Created>(`${base}/pipelines`, {
    name: 'Sales',
    is_primary: true,
    stages: [{ name: 'New' }, { name: 'Contacted' }, { name: 'Qualified' }, { name: 'Proposal' }, { name: 'Negotiation' }],
  });
  await admin.create(`${base}/pipelines`, {
    name: 'Partnerships',
    stages: [{ name: 'Prospect' }, { name: 'Talking' }, { name: 'Signed' }],
  });

  const named = async (collection: string, names: string[]) => {
    for (const name of names) await admin.create(`${base}/${collection}`, { name });
  };
  await admin.create(`${base}/tags`, { name: 'Hot', color: { background: '#d32f2f', foreground: '#ffffff' } });
  await admin.create(`${base}/tags`, { name: 'Cold', color: { background: '#1976d2', foreground: '#ffffff' } });
  await named('tags', ['VIP']);
  await named('lead-sources', ['Website', 'Referral', 'Event']);
  await named('loss-reasons', ['Price too high', 'Chose a competitor', 'No budget']);
  await named('gain-reasons', ['Best fit', 'Good price']);
  await named('follower-roles', ['Observer', 'Sales engineer']);
  await admin.create(`${base}/custom-fields`, { entity: 'lead', name: 'Budget notes', type: 'text' });

  await admin.create(`${base}/task-types`, { name: 'Call' });
  await admin.create(`${base}/task-types`, { name: 'Meeting', is_meeting: true, default_duration_minutes: 30 });
  await admin.create(`${base}/task-types`, { name: 'E-mail' });
  await admin.create(`${base}/task-stages`, { name: 'To do' });
  await admin.create(`${base}/task-stages`, { name: 'In progress' });
  await admin.create(`${base}/task-stages`, { name: 'Done', is_completion: true });

  // Chats work from the first start: a WhatsApp number on the sandbox provider (no credentials, sends succeed),
  // the integration user as its agent, and one of the sandbox's templates for opening chats (POST /chats).
  const number = await admin.create<Created>(`${base}/whatsapp-numbers`, {
    display_number: '+1 555 0100',
    raw_number: '15550100',
    phone_number_id: `demo-${cid}`,
    verified_name: 'Demo Support',
    provider: 'sandbox',
  });
  await admin.create(`${base}/agents`, { user_id: integrationUser.id, whatsapp_number_ids: [number.id] });
  await admin.create(`${base}/message-templates`, {
    whatsapp_number_id: number.id,
    name: 'hello_world',
    language: 'en_US',
    category: 'UTILITY',
    components: [{ type: 'BODY', text: 'Hello World' }],
  });

  return {
    company_id: cid,
    master_user_id: company.master_user.id,
    integration_user_id: integrationUser.id,
    key_id: key.id,
    key: key.key,
    pipeline_id: pipeline.id,
    database,
    created_at: new Date().toISOString(),
  };
}

export type DemoCheck = 'ok' | 'missing' | 'key-invalid';

/** Whether the recorded demo company exists in this stack's database and its key still works. */
export async function checkDemo(admin: AdminClient, demo: DemoRecord): Promise<DemoCheck> {
  const res = await admin.call('GET', `/companies/${demo.company_id}`);
  if (res.status === 404) return 'missing';
  if (res.status !== 200) throw new AdminApiError('GET', `/companies/${demo.company_id}`, res.status, JSON.stringify(res.body ?? null));
  // Any lead path answers 401 when the key is unknown or revoked; 200/404 mean the key was accepted.
  const probe = await fetch(`${admin.gatewayUrl}/integrations/external/leads/1`, {
    headers: { authorization: `Bearer ${demo.key}` },
    signal: AbortSignal.timeout(30_000),
  });
  await probe.arrayBuffer();
  return probe.status === 401 || probe.status === 403 ? 'key-invalid' : 'ok';
}

/** A fresh key for the recorded demo company (when the recorded one no longer works). */
export async function renewDemoKey(admin: AdminClient, demo: DemoRecord): Promise<DemoRecord> {
  const key = await admin.create<Created & { key: string }>(`/companies/${demo.company_id}/keys`, {
    created_by_user_id: demo.integration_user_id,
    permissions: ['*'],
  });
  return { ...demo, key_id: key.id, key: key.key };
}
