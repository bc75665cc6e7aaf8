import { expect } from 'chai';
import pg from 'pg';
import { client } from './client.js';
import { adminOf, seedTenant, type Tenant } from './fixtures.js';
import { startReceiver } from './receiver.js';
import { type Stack, type StackOptions, startStack } from './stack.js';

/** The stack, a client of its gateway, its admin API and a connection to its database (the test ends both). */
export async function openStack(): Promise<{
  stack: Stack;
  call: ReturnType<typeof client>['call'];
  admin: ReturnType<typeof adminOf>;
  db: pg.Client;
}> {
  const stack = await startStack();
  const call = client(stack.gatewayUrl).call;
  const db = new pg.Client({ connectionString: stack.db.url });
  await db.connect();
  return { stack, call, admin: adminOf(call, stack.adminToken), db };
}

/** openStack with two tenants: `t`, the one a test works as, and `other`, whose records `t` must not see. */
export async function openTenants(): Promise<Awaited<ReturnType<typeof openStack>> & { t: Tenant; other: Tenant }> {
  const opened = await openStack();
  const t = await seedTenant(opened.call, opened.stack.adminToken);
  const other = await seedTenant(opened.call, opened.stack.adminToken);
  return { ...opened, t, other };
}

/** A stack and a tenant whose webhook subscription to `keys` points at a loopback receiver (path `/<company id>`). */
export async function subscribedStack(keys: string[], options: StackOptions = {}) {
  const stack = await startStack(options);
  const { call } = client(stack.gatewayUrl);
  const admin = adminOf(call, stack.adminToken);
  const receiver = await startReceiver();
  const t = await seedTenant(call, stack.adminToken);
  const sub = await admin('POST', `/companies/${t.company.id}/webhooks`, { url: receiver.url(`/${t.company.id}`), events: keys });
  expect(sub.status, sub.text).to.equal(201);
  return { stack, call, admin, receiver, t };
}
