import { createHmac } from 'node:crypto';
import { FakeGraph } from '@svc/chat/testing';
import { randomSuffix } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { type CallResult, client } from './client.js';
import { adminOf, seedTenant, type Tenant } from './fixtures.js';
import { startStack } from './stack.js';

type Call = <T = any>(
  method: string,
  path: string,
  opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<CallResult<T>>;

/**
 * A tenant set up for chats through the management API: a WhatsApp number (sandbox provider), an Instagram
 * account, an agent for the integration user on both and one for a second user on the number only, an approved
 * template, and a person with a phone contact.
 */
export interface ChatTenant extends Tenant {
  number: any;
  instagram: any;
  agent: any;
  otherUser: any;
  otherAgent: any;
  template: any;
  person: any;
  /** Creates a chat through the admin API and returns its detail. */
  chat(body: Record<string, unknown>): Promise<any>;
  admin: ReturnType<typeof adminOf>;
}

export async function seedChatTenant(call: Call, adminToken: string, numberBody: Record<string, unknown> = {}): Promise<ChatTenant> {
  const t = await seedTenant(call, adminToken, { rate_limit_per_minute: 100_000 });
  const admin = adminOf(call, adminToken);
  const made = async (path: string, body: unknown) => {
    const res = await admin('POST', `/companies/${t.company.id}${path}`, body);
    expect(res.status, `${path}: ${res.text}`).to.equal(201);
    return res.body;
  };
  const tag = randomSuffix();
  const number = await made('/whatsapp-numbers', {
    display_number: '+55 11 4000-0000',
    raw_number: '551140000000',
    phone_number_id: `pn-${tag}`,
    verified_name: 'Acme Support',
    ...numberBody,
  });
  const instagram = await made('/instagram-accounts', { handle: '@acme', display_name: 'Acme IG', external_account_id: `ig-${tag}` });
  const agent = await made('/agents', { user_id: t.user.id, whatsapp_number_ids: [number.id], instagram_account_ids: [instagram.id] });
  const otherUser = await made('/users', { name: 'Second Agent', email: `second-${tag}@example.test` });
  const otherAgent = await made('/agents', { user_id: otherUser.id, whatsapp_number_ids: [number.id] });
  const template = await made('/message-templates', {
    whatsapp_number_id: number.id,
    name: 'order_update',
    language: 'en_US',
    category: 'UTILITY',
    components: [{ type: 'BODY', text: 'Your order {{1}} is {{2}}.' }],
  });
  const person = await made('/persons', { name: 'Maria Cliente', contacts: [{ type: 2, value: '+55 (11) 98765-4321' }] });
  return { ...t, number, instagram, agent, otherUser, otherAgent, template, person, admin, chat: (body) => made('/chats', body) };
}

/**
 * The two chats of the tenant's person that the lead-field tests read back: an open WhatsApp chat with unread
 * messages assigned to the second agent, and an Instagram chat active a minute ago.
 */
export async function seedPersonChats(t: ChatTenant): Promise<{ wa: any; ig: any }> {
  const wa = await t.chat({
    channel_type: 'WHATSAPP',
    whatsapp_number_id: t.number.id,
    wa_contact_id: '5511987654321',
    person_id: t.person.id,
    remote_profile_name: 'Maria Zap',
    unread_count: 2,
    assigned_agent_id: t.otherAgent.agent_id,
  });
  const ig = await t.chat({
    channel_type: 'INSTAGRAM',
    instagram_account_id: t.instagram.id,
    external_contact: { id: 'igsid-9', handle: 'maria.ig', display_name: 'Maria IG' },
    person_id: t.person.id,
    last_activity_at: new Date(Date.now() - 60_000).toISOString(),
  });
  return { wa, ig };
}

export function chatsApi(call: Call, token: () => string) {
  const base = '/integrations/external/chats';
  const qs = (query: Record<string, string | number | boolean>) => {
    const s = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return s ? `?${s}` : '';
  };
  return {
    list: (query: Record<string, string | number | boolean> = {}, key = token()) => call('GET', `${base}${qs(query)}`, { token: key }),
    get: (id: string, key = token()) => call('GET', `${base}/${id}`, { token: key }),
    messages: (id: string, query: Record<string, string | number | boolean> = {}, key = token()) =>
      call('GET', `${base}/${id}/messages${qs(query)}`, { token: key }),
    send: (id: string, body: unknown, key = token()) => call('POST', `${base}/${id}/messages`, { token: key, body }),
    create: (body: unknown, key = token()) => call('POST', base, { token: key, body }),
    post: (p: string, body: unknown = undefined, key = token()) => call('POST', `${base}${p}`, { token: key, body }),
    path: (p: string) => `${base}${p}`,
  };
}

/** A stack whose chat service talks to a fake Graph server on loopback, and a tenant whose number is served by it. */
export const APP_SECRET = 'test-app-secret';

export async function openChatStack(chatEnv: Record<string, string> = {}) {
  const graph = await new FakeGraph().start();
  const stack = await startStack({
    chat: {
      WHATSAPP_GRAPH_URL: graph.baseUrl,
      WHATSAPP_ACCESS_TOKEN: graph.token,
      WHATSAPP_APP_SECRET: APP_SECRET,
      INSTAGRAM_GRAPH_URL: graph.baseUrl,
      INSTAGRAM_ACCESS_TOKEN: graph.token,
      ...chatEnv,
    },
  });
  const call = client(stack.gatewayUrl).call;
  const db = new pg.Client({ connectionString: stack.db.url });
  await db.connect();
  const tenant = await seedChatTenant(call, stack.adminToken, {
    provider: 'whatsapp_cloud',
    phone_number_id: graph.phoneNumberIds[0],
    business_account_id: graph.businessAccountId,
  });
  return {
    graph,
    stack,
    call,
    db,
    tenant,
    stop: async () => {
      await db.end();
      await stack.stop();
      await graph.stop();
    },
  };
}

type ChatStack = Awaited<ReturnType<typeof openChatStack>>;

/** A WhatsApp Cloud API callback for the fake business account and first number of `s`, as raw JSON. */
export const whatsappCallback = (s: ChatStack, value: Record<string, unknown>) =>
  JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: s.graph.businessAccountId,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '551140000000', phone_number_id: s.graph.phoneNumberIds[0] },
              ...value,
            },
          },
        ],
      },
    ],
  });

/** POSTs a raw callback to the gateway's WhatsApp route, signed with the app secret as Meta signs it. */
export const deliverWhatsApp = (s: ChatStack, raw: string) =>
  fetch(`${s.stack.gatewayUrl}/providers/whatsapp/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(raw).digest('hex')}`,
    },
    body: raw,
  });

/** Two WhatsApp chats of the tenant of `s`: `open`, whose customer wrote an hour ago (its 24-hour window is open), and `closed`. */
export async function openAndClosedChats(s: ChatStack): Promise<{ open: any; closed: any }> {
  const open = await s.tenant.chat({
    channel_type: 'WHATSAPP',
    whatsapp_number_id: s.tenant.number.id,
    wa_contact_id: '5511987654321',
    last_customer_msg_at: new Date(Date.now() - 3600_000).toISOString(),
  });
  const closed = await s.tenant.chat({ channel_type: 'WHATSAPP', whatsapp_number_id: s.tenant.number.id, wa_contact_id: '5511900001111' });
  return { open, closed };
}

/** An archived WhatsApp chat of the tenant's person, which lists of the person's chats leave out. */
export const archivedChat = (t: ChatTenant) =>
  t.chat({
    channel_type: 'WHATSAPP',
    whatsapp_number_id: t.number.id,
    wa_contact_id: '5511900000001',
    person_id: t.person.id,
    archived: true,
  });
