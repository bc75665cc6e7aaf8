import { credentials } from '@grpc/grpc-js';
import { type Company, CrmServiceClient, type User } from '@svc/proto/crm/v1/crm';
import { callUnary } from '../grpc/server.js';

/** Companies are cached briefly: plan validity and existence change rarely and are checked on hot paths. */
export class CrmPeer {
  readonly client: CrmServiceClient;
  private readonly companies = new Map<string, { at: number; company: Promise<Company> }>();

  constructor(
    address: string,
    private readonly companyTtlMs = 2000,
  ) {
    this.client = new CrmServiceClient(address, credentials.createInsecure());
  }

  getCompany(companyId: string): Promise<Company> {
    const now = Date.now();
    const hit = this.companies.get(companyId);
    if (hit && now - hit.at < this.companyTtlMs) return hit.company;
    const company = callUnary(this.client, this.client.getCompany, { company_id: companyId }).then((r) => {
      if (!r.company) throw new Error('crm answered GetCompany without a company');
      return r.company;
    });
    company.catch(() => this.companies.delete(companyId));
    if (this.companies.size > 10_000) this.companies.clear();
    this.companies.set(companyId, { at: now, company });
    return company;
  }

  async getUser(companyId: string, userId: string): Promise<User> {
    const r = await callUnary(this.client, this.client.getUser, { company_id: companyId, user_id: userId });
    if (!r.user) throw new Error('crm answered GetUser without a user');
    return r.user;
  }

  close(): void {
    this.client.close();
  }
}

export { planValidAt } from '../events/plan.js';
