import { TaskCounts } from '@svc/crm';
import { createLogger } from '@svc/platform/logging';
import { expect } from 'chai';
import { openStack } from '../support/session.js';
import { freePort, type Stack } from '../support/stack.js';
import { seedTaskTenant, type TaskTenant } from '../support/tasks.js';

/**
 * `associations_count` of the lead and deal details counts what exists (issue 23 item 12): tasks linked to the
 * record (asked of the tasks service at each read), the items of its proposals, its quality rating, notes,
 * proposals and a lead's deals.
 */
describe('associations_count of the lead and deal details', () => {
  let stack: Stack;
  let call: Awaited<ReturnType<typeof openStack>>['call'];
  let db: Awaited<ReturnType<typeof openStack>>['db'];
  let t: TaskTenant;
  const ext = async (method: string, path: string, body?: unknown, status = method === 'POST' ? 201 : 200) => {
    const res = await call(method, `/integrations/external${path}`, { token: t.key.key, body });
    expect(res.status, `${method} ${path}: ${res.text}`).to.equal(status);
    return res.body;
  };
  const task = (link: Record<string, string>) =>
    ext('POST', '/tasks', { crm_task_type_id: t.types.call.id, title: 'Call', start_date: '2030-01-01T10:00:00Z', ...link });
  const counts = async (path: string) => (await ext('GET', path)).associations_count;

  before(async () => {
    ({ stack, call, db } = await openStack());
    t = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('counts a lead’s tasks, proposal items, quality rating, notes and proposals, and follows changes of its tasks', async () => {
    const lead = await ext('POST', '/leads', { title: 'Counted', quality_rating: 4, note: { content: 'First call', is_pinned: false } });
    await ext('POST', '/proposals', {
      crm_lead_id: lead.id,
      title: 'A',
      items: [
        { name: 'x', quantity: 1, unit_price: 1 },
        { name: 'y', quantity: 2, unit_price: 1 },
      ],
    });
    const b = await ext('POST', '/proposals', { crm_lead_id: lead.id, title: 'B', items: [{ name: 'z', quantity: 1, unit_price: 5 }] });
    const first = await task({ crm_lead_id: lead.id });
    await task({ crm_lead_id: lead.id });
    await task({ crm_lead_id: t.leads.team.id });
    expect(await counts(`/leads/${lead.id}`)).to.deep.equal({
      items: 3,
      tasks: 2,
      qualifications: 1,
      notes: 1,
      files: 0,
      activities: 0,
      proposals: 2,
      deals: 0,
    });
    // Tasks are asked at each read: a deleted task leaves the count of a cached detail at once.
    await ext('DELETE', `/tasks/${first.id}`);
    expect((await counts(`/leads/${lead.code}`)).tasks).to.equal(1);
    expect((await counts(`/leads/${t.leads.team.id}`)).tasks).to.equal(1);
    // Items replaced through their proposal reach the cached detail too.
    await ext('PUT', `/proposals/${b.id}`, {
      items: [
        { name: 'z', quantity: 1, unit_price: 5 },
        { name: 'w', quantity: 1, unit_price: 0 },
      ],
    });
    expect((await counts(`/leads/${lead.id}`)).items).to.equal(4);
    const unrated = await ext('POST', '/leads', { title: 'Unrated' });
    expect(await counts(`/leads/${unrated.id}`)).to.include({ tasks: 0, items: 0, qualifications: 0, proposals: 0 });
  });

  it('counts a deal’s tasks and proposal items', async () => {
    const deal = await ext('POST', '/deals', { title: 'Counted deal' });
    await ext('POST', '/proposals', { crm_deal_id: deal.id, title: 'D', items: [{ name: 'x', quantity: 1, unit_price: 1 }] });
    await task({ crm_deal_id: deal.id });
    expect(await counts(`/deals/${deal.id}`)).to.include({ tasks: 1, items: 1, proposals: 1, qualifications: 0 });
  });

  it('answers 0 tasks when the tasks service does not answer, as the chat fields degrade', async () => {
    const down = new TaskCounts(`127.0.0.1:${await freePort()}`, createLogger('test', 'silent'));
    try {
      expect(await down.recordTasks(t.company.id, 'lead', t.leads.team.id)).to.equal(0);
    } finally {
      down.close();
    }
    const live = new TaskCounts(stack.services.tasks!.grpcAddress, createLogger('test', 'silent'));
    try {
      expect(await live.recordTasks(t.company.id, 'lead', t.leads.team.id)).to.equal(1);
    } finally {
      live.close();
    }
  });
});
