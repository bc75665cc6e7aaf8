import pg from 'pg';
import { client } from './client.js';
import { adminOf, seedTenant, type Tenant } from './fixtures.js';
import { type Stack, startStack } from './stack.js';

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
