import { randomSuffix } from '@svc/platform/testing';
import type { CallResult } from './client.js';

type Call = <T = any>(
  method: string,
  path: string,
  opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<CallResult<T>>;

export interface Tenant {
  company: any;
  master: any;
  user: any;
  key: any;
  pipeline: any;
}

/** A company as an operator would set it up: master user, an integration user, a ["*"] key, a primary pipeline. */
export async function seedTenant(call: Call, adminToken: string, keyOptions: Record<string, unknown> = {}): Promise<Tenant> {
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, `/admin/v1${path}`, { token: adminToken, body });
    if (res.status !== 201 && res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const tag = randomSuffix();
  const company = await admin('POST', '/companies', {
    name: `Co ${tag}`,
    master_user: { name: 'Master', email: `master-${tag}@example.test` },
  });
  const user = await admin('POST', `/companies/${company.id}/users`, { name: 'Integrator', email: `int-${tag}@example.test` });
  const key = await admin('POST', `/companies/${company.id}/keys`, { created_by_user_id: user.id, permissions: ['*'], ...keyOptions });
  const pipeline = await admin('POST', `/companies/${company.id}/pipelines`, {
    name: 'Sales',
    is_primary: true,
    stages: [{ name: 'New' }, { name: 'Qualified' }, { name: 'Proposal' }],
  });
  return { company, master: company.master_user, user, key, pipeline };
}

export function adminOf(call: Call, adminToken: string) {
  return <T = any>(method: string, path: string, body?: unknown) => call<T>(method, `/admin/v1${path}`, { token: adminToken, body });
}
