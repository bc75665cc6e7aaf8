import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import { LeadDetails } from '../src/leads/lead.detail.js';
import type { LeadStore } from '../src/leads/lead.store.js';
import { CoalescedTasks, type TaskSource } from '../src/sales/sales.tasks.js';

/**
 * Decision 0224: reads of one record share a call to tasks, and a cached lead asks tasks alongside its check. The
 * count must stay what one call per read, made after the read arrived, would answer.
 */
describe('task counts of the lead and deal details (decision 0224)', () => {
  const company = uuidv7();

  /** A tasks service whose calls the test ends by hand; each answers the count at the time the call was made. */
  function tasksService() {
    const counts = new Map<string, number>();
    const calls: { id: string; end: () => void }[] = [];
    const source: TaskSource = {
      recordTasks: (_company, _kind, id) =>
        new Promise((resolve) => {
          const n = counts.get(id) ?? 0;
          calls.push({ id, end: () => resolve(n) });
        }),
    };
    return { counts, calls, source };
  }
  const tick = () => new Promise((r) => setImmediate(r));

  it('answers the reads of one record waiting together with one call', async () => {
    const t = tasksService();
    const tasks = new CoalescedTasks(t.source);
    const [a, b] = [uuidv7(), uuidv7()];
    t.counts.set(a, 3);
    t.counts.set(b, 1);
    const reads = [...Array.from({ length: 10 }, () => tasks.recordTasks(company, 'lead', a)), tasks.recordTasks(company, 'deal', b)];
    await tick();
    expect(t.calls.map((c) => c.id)).to.have.members([a, b]);
    for (const c of t.calls) c.end();
    expect(await Promise.all(reads)).to.deep.equal([...Array(10).fill(3), 1]);
  });

  it('sends a read arriving while a call is out in a new call, so it sees a task created before it', async () => {
    const t = tasksService();
    const tasks = new CoalescedTasks(t.source);
    const id = uuidv7();
    t.counts.set(id, 1);
    const first = tasks.recordTasks(company, 'lead', id);
    await tick();
    expect(t.calls).to.have.length(1);
    // A task is created and committed after the first call counted; a read after that must count it.
    t.counts.set(id, 2);
    const second = tasks.recordTasks(company, 'lead', id);
    await tick();
    expect(t.calls).to.have.length(1);
    t.calls[0]!.end();
    expect(await first).to.equal(1);
    await tick();
    expect(t.calls).to.have.length(2);
    t.calls[1]!.end();
    expect(await second).to.equal(2);
  });

  it('asks the task count of a cached lead alongside its check, and of an uncached one after its full read', async () => {
    const asked: string[] = [];
    const row = (id: string) => ({ n: 1, id, version: 1, _catalogVersion: '1', viewsCount: 1, _viewsCount: 1, _nowUs: '0' });
    const store = {
      sales: { pool: Promise.resolve({}) },
      detail: async (_db: unknown, _company: string, ref: string) => {
        asked.push('full');
        return row(ref);
      },
      checkDetail: async (_db: unknown, _company: string, id: string) => {
        asked.push('check');
        return [row(id)];
      },
    } as unknown as LeadStore;
    const parts = (r: Record<string, unknown>) => ({
      record: { id: r.id as string, detailVersion: 1 },
      head: { id: r.id },
      stagePeriods: [],
      nowUs: 0,
      associations: { tasks: 0, notes: 0 },
    });
    const details = new LeadDetails(store, parts as never);
    const id = uuidv7();
    let tasks = 4;
    const tasksOf = async (of: string) => {
      expect(of).to.equal(id);
      asked.push('tasks');
      return tasks;
    };
    const first = JSON.parse((await details.read(company, uuidv7(), id, undefined, tasksOf))!);
    expect(asked).to.deep.equal(['full', 'tasks']);
    expect(first.associations_count).to.deep.equal({ tasks: 4, notes: 0 });
    asked.length = 0;
    tasks = 5;
    const second = JSON.parse((await details.read(company, uuidv7(), id, undefined, tasksOf))!);
    expect(asked).to.deep.equal(['tasks', 'check']);
    expect(second.associations_count).to.deep.equal({ tasks: 5, notes: 0 });
  });
});
