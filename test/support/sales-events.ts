import { expect } from 'chai';
import { DEAL_SNAPSHOT_FIELDS, deliveredPayload, deliveriesOf, LEAD_SNAPSHOT_FIELDS, salesEventKeys } from './sales.js';
import { subscribedStack } from './session.js';

type Kind = 'lead' | 'deal';

/** The StageSummary of stage `index` of a pipeline as the admin API answered it. */
export const stageSummaryOf = (pipeline: { id: string; name: string; stages: { id: string; name: string }[] }, index: number) => ({
  id: pipeline.stages[index]!.id,
  name: pipeline.stages[index]!.name,
  pipeline: { id: pipeline.id, name: pipeline.name },
});

/**
 * The set-up of a sales-record event test: the stack, a tenant (fixtures.seedTenant) whose webhook subscription to
 * `keys` points at a loopback receiver, and the calls such a test makes on the tenant's records and events.
 */
export async function salesEventsStack(keys: string[]) {
  const { stack, call, admin, receiver, t } = await subscribedStack(keys);
  const kindOf = (key: string) => key.split('.')[0] as Kind;
  const create = async (kind: Kind, body: Record<string, unknown>) => {
    const res = await call('POST', `/integrations/external/${kind}s`, { token: t.key.key, body: { title: 'Evented', ...body } });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number };
  };
  const detail = async (kind: Kind, id: string) => {
    const res = await call('GET', `/integrations/external/${kind}s/${id}`, { token: t.key.key });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  return {
    stack,
    call,
    admin,
    receiver,
    t,
    /** The payload of the `count`th delivery of `key` about record `id`, waited for. */
    one: (id: string, key: string, count = 1) => deliveredPayload(receiver, kindOf(key), id, key, count),
    /** POST /leads or /deals with the tenant's key (201 expected). */
    create,
    /**
     * Waits for `counts[key]` deliveries of each key about record `id`, then for the `<kind>.created` of a record
     * created after them (events issued before it have had their turn), and checks that exactly those arrived: no
     * more of them, none of the kind's other keys.
     */
    async expectExactly(kind: Kind, id: string, counts: Record<string, number>) {
      for (const [key, n] of Object.entries(counts)) if (n > 0) await deliveredPayload(receiver, kind, id, key, n);
      const later = await create(kind, { title: 'Later' });
      await deliveredPayload(receiver, kind, later.id, `${kind}.created`);
      const got = Object.fromEntries(salesEventKeys(kind).map((key) => [key, deliveriesOf(receiver, kind, id, key).length]));
      expect(got).to.deep.equal(Object.fromEntries(salesEventKeys(kind).map((key) => [key, counts[key] ?? 0])));
    },
    /** An admin call under the tenant's company (`/companies/{cid}/<rest>`), or another company's. */
    act: (method: string, rest: string, body?: unknown, companyId: string = t.company.id) =>
      admin(method, `/companies/${companyId}/${rest}`, body),
    /** A dedicated action (200 expected): its answer, the record's snapshot. */
    async action(method: string, rest: string, body?: unknown) {
      const res = await admin(method, `/companies/${t.company.id}/${rest}`, body);
      expect(res.status, res.text).to.equal(200);
      return res.body;
    },
    /** GET /leads/{id} or /deals/{id} with the tenant's key (200 expected). */
    detail,
    /** The snapshot part of the detail (what events carry): the detail without its detail-only fields. */
    async snapshotOf(kind: Kind, id: string) {
      const { pipeline_stages: _p, stage_durations: _s, associations_count: _a, views_count: _v, ...snapshot } = await detail(kind, id);
      return snapshot;
    },
    /** A LeadSnapshot / DealSnapshot with every field the spec lists, of record `id`. */
    expectSnapshot(kind: Kind, snapshot: any, id: string) {
      expect(snapshot).to.include.all.keys(...(kind === 'lead' ? LEAD_SNAPSHOT_FIELDS : DEAL_SNAPSHOT_FIELDS));
      expect(snapshot.id).to.equal(id);
    },
    async close() {
      await receiver.close();
      await stack.stop();
    },
  };
}
export type SalesEventsStack = Awaited<ReturnType<typeof salesEventsStack>>;
