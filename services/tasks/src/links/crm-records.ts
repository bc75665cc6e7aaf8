import { credentials } from '@grpc/grpc-js';
import { callUnary } from '@svc/platform/grpc/server';
import {
  type CustomerSummary,
  type DeliverySummary,
  type LeadSummary,
  type OrganizationSummary,
  type PersonSummary,
  RecordServiceClient,
  RecordType,
  type TagSummary,
  type UserSummary,
} from '@svc/proto/crm/v1/records';

export type LinkKind = 'lead' | 'deal' | 'delivery' | 'person' | 'organization' | 'customer';

const typeOfKind: Record<LinkKind | 'tag' | 'user', RecordType> = {
  lead: RecordType.RECORD_TYPE_LEAD,
  deal: RecordType.RECORD_TYPE_DEAL,
  delivery: RecordType.RECORD_TYPE_DELIVERY,
  person: RecordType.RECORD_TYPE_PERSON,
  organization: RecordType.RECORD_TYPE_ORGANIZATION,
  customer: RecordType.RECORD_TYPE_CUSTOMER,
  tag: RecordType.RECORD_TYPE_TAG,
  user: RecordType.RECORD_TYPE_USER,
};

export class RecordRefs {
  readonly ids = new Map<LinkKind | 'tag' | 'user', Set<string>>();
  add(kind: LinkKind | 'tag' | 'user', id: string | null | undefined): this {
    if (!id) return this;
    this.ids.set(kind, (this.ids.get(kind) ?? new Set<string>()).add(id));
    return this;
  }
}

/** crm's answer, by id. Anything missing does not exist, is another company's, or is hidden from the viewer. */
export interface RecordIndex {
  leads: Map<string, LeadSummary>;
  deals: Map<string, { id: string; title: string; code: number }>;
  deliveries: Map<string, DeliverySummary>;
  customers: Map<string, CustomerSummary>;
  persons: Map<string, PersonSummary>;
  organizations: Map<string, OrganizationSummary>;
  tags: Map<string, TagSummary>;
  users: Map<string, UserSummary>;
}

const byId = <T extends { id: string }>(list: T[]) => new Map(list.map((x) => [x.id, x]));

/** Summaries as the acting user may see them. */
export class CrmRecords {
  private readonly client: RecordServiceClient;

  constructor(address: string) {
    this.client = new RecordServiceClient(address, credentials.createInsecure());
  }

  async summaries(companyId: string, viewerUserId: string, refs: RecordRefs): Promise<RecordIndex> {
    const list = [...refs.ids].flatMap(([kind, ids]) => [...ids].map((id) => ({ type: typeOfKind[kind], id })));
    const r = await callUnary(this.client, this.client.getRecordSummaries, {
      company_id: companyId,
      viewer_user_id: viewerUserId,
      refs: list,
    });
    return {
      leads: byId(r.leads),
      deals: byId(r.deals),
      deliveries: byId(r.deliveries),
      customers: byId(r.customers),
      persons: byId(r.persons),
      organizations: byId(r.organizations),
      tags: byId(r.tags),
      users: byId(r.users),
    };
  }

  close(): void {
    this.client.close();
  }
}
