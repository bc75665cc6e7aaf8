import { expect } from 'chai';
import { client } from '../../support/client.js';
import { PDF_BYTES, postMultipart } from '../../support/files.js';
import { adminOf } from '../../support/fixtures.js';
import { seedTaskTenant } from '../../support/tasks.js';
import { type System, startSystem } from './system.js';

type Call = ReturnType<typeof client>['call'];

/** The kinds of record an id-bearing parameter names; every tenant of the world has one of each. */
export type Kind =
  | 'lead'
  | 'deal'
  | 'task'
  | 'pipeline'
  | 'stage'
  | 'user'
  | 'person'
  | 'organization'
  | 'tag'
  | 'lead_source'
  | 'custom_field'
  | 'follower_role'
  | 'task_type'
  | 'task_stage'
  | 'chat'
  | 'scheduled_message'
  | 'message'
  | 'file'
  | 'proposal'
  | 'attachment'
  | 'document'
  | 'webhook'
  | 'webhook_delivery';

export interface WorldTenant {
  companyId: string;
  /** An integration key with every permission. */
  key: string;
  ids: Record<Kind, string>;
  /** Appears in every name and title of the tenant's records: a response of another tenant must never contain it. */
  marker: string;
}

export interface World {
  system: System;
  call: Call;
  admin: ReturnType<typeof adminOf>;
  /** The tenant whose keys make the requests. */
  own: WorldTenant;
  /** The tenant whose ids they try. */
  other: WorldTenant;
  /** Makes a key of `own` with these permissions (cached per set). */
  keyWith(permissions: string[]): Promise<string>;
  /** Every secret a request of the suite carried or was given (keys, webhook secrets, signatures, signed URLs). */
  secrets: Set<string>;
}

async function seedWorldTenant(
  call: Call,
  gatewayUrl: string,
  adminToken: string,
  marker: string,
  secrets: Set<string>,
): Promise<WorldTenant> {
  const t = await seedTaskTenant(call, adminToken, { rate_limit_per_minute: 1_000_000 });
  const admin = adminOf(call, adminToken);
  const made = async (path: string, body: unknown) => {
    const res = await admin('POST', `/companies/${t.company.id}${path}`, body);
    expect(res.status, `${path}: ${res.text}`).to.equal(201);
    return res.body;
  };
  const key = t.key.key as string;
  const created = async (path: string, body: unknown) => {
    const res = await call('POST', `/integrations/external${path}`, { token: key, body });
    expect(res.status, `${path}: ${res.text}`).to.equal(201);
    return res.body;
  };
  const leadSource = await made('/lead-sources', { name: `Source ${marker}` });
  const customField = await made('/custom-fields', { entity: 'lead', name: `Field ${marker}`, type: 'text' });
  const followerRole = await made('/follower-roles', { name: `Role ${marker}` });
  const lead = await created('/leads', { title: `Lead ${marker}`, visibility: 1 });
  const deal = await created('/deals', { title: `Deal ${marker}`, visibility: 1 });
  // A WhatsApp chat whose customer wrote a minute ago (the window is open), the key's user its agent, with one
  // scheduled message.
  const number = await made('/whatsapp-numbers', {
    display_number: '+55 11 4000-0000',
    raw_number: '551140000000',
    phone_number_id: `pn-${marker}`,
    verified_name: `Number ${marker}`,
  });
  await made('/agents', { user_id: t.user.id, whatsapp_number_ids: [number.id] });
  const chat = await made('/chats', {
    channel_type: 'WHATSAPP',
    whatsapp_number_id: number.id,
    wa_contact_id: '5511987654321',
    person_id: t.person.id,
    last_customer_msg_at: new Date().toISOString(),
  });
  const scheduled = await created(`/chats/${chat.id}/scheduled-messages`, {
    scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
    body: `Later ${marker}`,
  });
  // A message the customer sent (the admin inbound route stores it as the provider's webhook would).
  const inbound = await admin('POST', `/companies/${t.company.id}/chats/${chat.id}/inbound`, {
    type: 'text',
    body_text: `Hello ${marker}`,
    wamid: `wamid.${marker}`,
  });
  expect(inbound.status, inbound.text).to.equal(201);
  // A file of the lead, and a proposal of the lead with a file attached.
  const upload = async (path: string, parts: Parameters<typeof postMultipart>[2]) => {
    const res = await postMultipart(`${gatewayUrl}/integrations/external${path}`, key, parts);
    expect(res.status, `${path}: ${res.text}`).to.equal(201);
    return res.body as { id: string };
  };
  const pdf = { name: 'file', filename: `file-${marker}.pdf`, contentType: 'application/pdf', data: PDF_BYTES };
  const document = await made('/proposal-documents', {
    name: `Document ${marker}`,
    file_name: 'terms.pdf',
    mime_type: 'application/pdf',
    file_size: 1234,
    url: 'https://library.example.test/terms.pdf',
  });
  const file = await upload('/files', [{ name: 'crm_lead_id', value: lead.id }, pdf]);
  const proposal = await created('/proposals', { crm_lead_id: lead.id, title: `Proposal ${marker}` });
  const attachment = await upload(`/proposals/${proposal.id}/attachments`, [{ ...pdf, filename: `attachment-${marker}.pdf` }]);
  const task = await created('/tasks', {
    title: `Task ${marker}`,
    crm_task_type_id: t.types.call.id,
    crm_lead_id: lead.id,
    start_date: '2030-01-01T10:00:00Z',
  });
  // A subscription of the key's own (decision 0175) to an event that rarely fires, and its test delivery.
  const webhook = await created('/webhooks', { url: `https://hooks.example.test/${marker}`, events: ['webhook.disabled'] });
  const probe = await call('POST', `/integrations/external/webhooks/${webhook.id}/test`, { token: key, body: {} });
  expect(probe.status, probe.text).to.equal(202);
  secrets.add(key).add(t.other.key.key).add(webhook.secret);
  return {
    companyId: t.company.id,
    key,
    marker,
    ids: {
      lead: lead.id,
      deal: deal.id,
      task: task.id,
      pipeline: t.pipeline.id,
      stage: t.pipeline.stages[0].id,
      user: t.user.id,
      person: t.person.id,
      organization: t.organization.id,
      tag: t.tags.red.id,
      lead_source: leadSource.id,
      custom_field: customField.id,
      follower_role: followerRole.id,
      task_type: t.types.call.id,
      task_stage: t.stages.todo.id,
      chat: chat.id,
      scheduled_message: scheduled.id,
      message: inbound.body.id,
      file: file.id,
      proposal: proposal.id,
      attachment: attachment.id,
      document: document.id,
      webhook: webhook.id,
      webhook_delivery: probe.body.id,
    },
  };
}

let shared: Promise<World> | undefined;

/** One system and two tenants for the suite's files, started by the first that asks, stopped by the root hook. */
export function world(): Promise<World> {
  shared ??= (async () => {
    const system = await startSystem();
    const { call } = client(system.gatewayUrl);
    const secrets = new Set<string>([system.adminToken]);
    const own = await seedWorldTenant(call, system.gatewayUrl, system.adminToken, `OWNMARK${Date.now().toString(36)}`, secrets);
    const other = await seedWorldTenant(call, system.gatewayUrl, system.adminToken, `VICTIMMARK${Date.now().toString(36)}`, secrets);
    const admin = adminOf(call, system.adminToken);
    const keys = new Map<string, Promise<string>>();
    const keyWith = (permissions: string[]) => {
      const id = permissions.join(',');
      let k = keys.get(id);
      if (!k) {
        k = admin('POST', `/companies/${own.companyId}/keys`, {
          created_by_user_id: own.ids.user,
          permissions,
          rate_limit_per_minute: 1_000_000,
        }).then((res) => {
          expect(res.status, res.text).to.equal(201);
          secrets.add(res.body.key);
          return res.body.key as string;
        });
        keys.set(id, k);
      }
      return k;
    };
    return { system, call, admin, own, other, keyWith, secrets };
  })();
  return shared;
}

export async function stopWorld(): Promise<void> {
  if (!shared) return;
  const w = await shared.catch(() => undefined);
  shared = undefined;
  await w?.system.stop();
}
