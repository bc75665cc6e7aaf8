/** The bench's tenant, created through the management API (/admin/v1) of the gateway. */
import { AdminClient } from '../../scripts/demo.js';

export interface Seeded {
  companyId: string;
  userId: string;
  keyId: string;
  key: string;
  pipelineId: string;
  firstStageId: string;
  /** A lead created through the external API, used for the first GET (to capture the body). */
  leadId: string;
}

/** 1,000,000 is the largest rate_limit_per_minute the API accepts: the limiter counts every request but never refuses. */
export const BENCH_RATE_LIMIT = 1_000_000;

export async function seed(gatewayUrl: string, adminToken: string): Promise<Seeded> {
  const admin = new AdminClient(gatewayUrl, adminToken);
  const company = await admin.create<{ id: string }>('/companies', {
    name: 'Bench Company',
    master_user: { name: 'Bench Master', email: 'master@bench.example.com' },
  });
  const base = `/companies/${company.id}`;
  const user = await admin.create<{ id: string }>(`${base}/users`, { name: 'Bench Integration', email: 'integration@bench.example.com' });
  const key = await admin.create<{ id: string; key: string }>(`${base}/keys`, {
    created_by_user_id: user.id,
    permissions: ['*'],
    rate_limit_per_minute: BENCH_RATE_LIMIT,
  });
  const pipeline = await admin.create<{ id: string; stages: { id: string }[] }>(`${base}/pipelines`, {
    name: 'Sales',
    is_primary: true,
    stages: [{ name: 'New' }, { name: 'Contacted' }, { name: 'Qualified' }, { name: 'Proposal' }, { name: 'Negotiation' }],
  });
  const seeded = {
    companyId: company.id,
    userId: user.id,
    keyId: key.id,
    key: key.key,
    pipelineId: pipeline.id,
    firstStageId: pipeline.stages[0]!.id,
    leadId: '',
  };
  seeded.leadId = await createLead(gatewayUrl, key.key, 'Bench lead');
  return seeded;
}

export async function createLead(gatewayUrl: string, key: string, title: string): Promise<string> {
  const res = await fetch(`${gatewayUrl}/integrations/external/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST /integrations/external/leads: ${res.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { id: string }).id;
}
