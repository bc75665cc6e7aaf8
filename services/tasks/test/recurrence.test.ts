import { crmService } from '@svc/crm';
import { IdentitySigner } from '@svc/platform/identity';
import { createLogger } from '@svc/platform/logging';
import { type RunningService, startService } from '@svc/platform/service';
import type { TestDatabase } from '@svc/platform/testing';
import { serviceTestEnv } from '@svc/platform/testing-suite';
import { expect } from 'chai';
import pg from 'pg';
import { nextOccurrences, nextStart, type RecurrenceRule } from '../src/recurrence/recurrence.rule.js';
import { tasksService } from '../src/service.js';
import { SeriesMaterializer } from '../src/tasks/task.materializer.js';

const DAY_MS = 86_400_000;
const rule = (r: Partial<RecurrenceRule>): RecurrenceRule => ({
  pattern: 'every_n_days',
  interval: 1,
  weekDays: [],
  endType: 'none',
  untilDate: null,
  occurrences: null,
  utcOffsetMinutes: 0,
  ...r,
});
const iso = (d: Date) => d.toISOString();
const series = (r: RecurrenceRule, first: string, n: number) => {
  const out = [new Date(first)];
  while (out.length < n) out.push(nextStart(r, out[0]!, out[out.length - 1]!));
  return out.map(iso);
};

describe('recurrence rule', () => {
  it('every N days keeps the time of day', () => {
    expect(series(rule({ interval: 3 }), '2026-12-30T08:15:00.000Z', 3)).to.deep.equal([
      '2026-12-30T08:15:00.000Z',
      '2027-01-02T08:15:00.000Z',
      '2027-01-05T08:15:00.000Z',
    ]);
  });
  it('weekly walks the chosen days, then jumps interval weeks', () => {
    const r = rule({ pattern: 'weekly', interval: 3, weekDays: ['monday', 'friday'] });
    expect(series(r, '2026-11-30T10:00:00.000Z', 5)).to.deep.equal([
      '2026-11-30T10:00:00.000Z',
      '2026-12-04T10:00:00.000Z',
      '2026-12-21T10:00:00.000Z',
      '2026-12-25T10:00:00.000Z',
      '2027-01-11T10:00:00.000Z',
    ]);
  });
  it('weekly days are those of the series` offset', () => {
    // Sunday 23:30 at +05:30 is Sunday 18:00 UTC; Saturdays there are Saturdays 18:00 UTC.
    const r = rule({ pattern: 'weekly', weekDays: ['saturday', 'sunday'], utcOffsetMinutes: 330 });
    expect(series(r, '2026-12-06T18:00:00.000Z', 3)).to.deep.equal([
      '2026-12-06T18:00:00.000Z',
      '2026-12-12T18:00:00.000Z',
      '2026-12-13T18:00:00.000Z',
    ]);
  });
  it('monthly keeps the day, clamped to shorter months, every interval months, across years', () => {
    const r = rule({ pattern: 'monthly', interval: 1 });
    expect(series(r, '2027-12-31T09:00:00.000Z', 4)).to.deep.equal([
      '2027-12-31T09:00:00.000Z',
      '2028-01-31T09:00:00.000Z',
      '2028-02-29T09:00:00.000Z',
      '2028-03-31T09:00:00.000Z',
    ]);
    expect(series(rule({ pattern: 'monthly', interval: 5 }), '2026-10-15T09:00:00.000Z', 3)).to.deep.equal([
      '2026-10-15T09:00:00.000Z',
      '2027-03-15T09:00:00.000Z',
      '2027-08-15T09:00:00.000Z',
    ]);
  });
  it('monthly day is the day at the series` offset', () => {
    // 1 March 01:00 at +03:00 is 28 February 22:00 UTC; the series stays on the 1st there.
    const r = rule({ pattern: 'monthly', utcOffsetMinutes: 180 });
    expect(series(r, '2027-02-28T22:00:00.000Z', 3)).to.deep.equal([
      '2027-02-28T22:00:00.000Z',
      '2027-03-31T22:00:00.000Z',
      '2027-04-30T22:00:00.000Z',
    ]);
  });
  it('stops at the end rule, and says what comes next otherwise', () => {
    const first = new Date('2026-12-01T00:00:00Z');
    const byCount = nextOccurrences(
      rule({ endType: 'after_occurrences', occurrences: 3 }),
      first,
      { count: 1, lastStart: first },
      new Date(9e15),
      100,
    );
    expect(byCount.occurrences.map((o) => o.index)).to.deep.equal([1, 2]);
    expect(byCount.next).to.equal(null);
    const until = new Date('2026-12-03T00:00:00Z');
    const byDate = nextOccurrences(
      rule({ endType: 'on_date', untilDate: until }),
      first,
      { count: 1, lastStart: first },
      new Date(9e15),
      100,
    );
    expect(byDate.occurrences.map((o) => iso(o.start))).to.deep.equal(['2026-12-02T00:00:00.000Z', '2026-12-03T00:00:00.000Z']);
    const open = nextOccurrences(rule({}), first, { count: 1, lastStart: first }, new Date(first.getTime() + 2 * DAY_MS), 100);
    expect(open.occurrences).to.have.length(2);
    expect(iso(open.next!)).to.equal('2026-12-04T00:00:00.000Z');
    const capped = nextOccurrences(rule({}), first, { count: 1, lastStart: first }, new Date(9e15), 5);
    expect(capped.occurrences).to.have.length(5);
    expect(iso(capped.next!)).to.equal('2026-12-07T00:00:00.000Z');
  });
});

describe('series materializer (real Postgres, tasks and crm)', () => {
  let crm: RunningService;
  let tasks: RunningService;
  let db: TestDatabase;
  let pool: pg.Pool;
  let materializer: SeriesMaterializer;
  let post: (path: string, body: unknown) => Promise<any>;

  before(async () => {
    const t = await serviceTestEnv();
    db = t.db;
    crm = await startService(crmService, t.env);
    tasks = await startService(tasksService, { ...t.env, CRM_GRPC_URL: crm.grpcAddress, RECURRENCE_HORIZON_DAYS: '10' });
    const signer = new IdentitySigner(t.env.IDENTITY_TOKEN_SECRET!);
    const adminToken = await signer.sign({ kind: 'admin' });
    const send = async (service: RunningService, token: string, path: string, body: unknown) => {
      const res = await fetch(`${service.httpUrl}${path}`, {
        method: 'POST',
        headers: { 'x-svc-identity': token, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json: any = await res.json();
      if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const company = await send(crm, adminToken, '/admin/v1/companies', { name: 'R', master_user: { name: 'M', email: 'm@r.test' } });
    const type = await send(tasks, adminToken, `/admin/v1/companies/${company.id}/task-types`, { name: 'Call' });
    await send(tasks, adminToken, `/admin/v1/companies/${company.id}/task-stages`, { name: 'Open' });
    const token = await signer.sign({
      kind: 'integration',
      companyId: company.id,
      userId: company.master_user.id,
      keyId: company.master_user.id,
      permissions: ['*'],
    });
    post = (path, body) =>
      send(tasks, token, `/integrations/external${path}`, { crm_task_type_id: type.id, title: 'R', ...(body as object) });
    pool = new pg.Pool({ connectionString: db.url, options: '-c search_path=tasks', max: 2 });
    materializer = new SeriesMaterializer(async () => pool, {
      horizonDays: 10,
      intervalMs: 3_600_000,
      logger: createLogger('test', 'silent'),
    });
  });
  after(async () => {
    await pool?.end();
    await tasks?.stop();
    await crm?.stop();
    await db?.drop();
  });

  const occurrences = async (seriesId: string) =>
    (
      await pool.query<{ i: number; s: Date }>(
        'select recurrence_index as i, start_date as s from tasks where recurrence_series_id = $1 order by recurrence_index',
        [seriesId],
      )
    ).rows;

  it('tops an endless series up to the horizon as time passes, once', async () => {
    const start = new Date(Math.ceil(Date.now() / DAY_MS) * DAY_MS + DAY_MS);
    const first = await post('/tasks', { start_date: start.toISOString(), recurrence: { pattern: 'every_n_days', interval: 2 } });
    const seriesId = first.recurrence_series_id;
    // start + 0, 2, ..., 10 days: within 10 days of the start.
    expect((await occurrences(seriesId)).map((o) => o.i)).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(await materializer.runOnce(new Date()), 'nothing is due yet').to.equal(0);
    const later = new Date(start.getTime() + 5 * DAY_MS);
    expect(await materializer.runOnce(later)).to.equal(2);
    expect(await materializer.runOnce(later), 'running again adds nothing').to.equal(0);
    const all = await occurrences(seriesId);
    expect(all.map((o) => o.i)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(new Date(all[7]!.s).getTime() - start.getTime()).to.equal(14 * DAY_MS);
  });

  it('leaves a finished series alone', async () => {
    const first = await post('/tasks', {
      start_date: '2026-12-01T09:00:00Z',
      recurrence: { pattern: 'every_n_days', end_type: 'after_occurrences', occurrences: 3 },
    });
    const { rows } = await pool.query('select next_start, materialized_count from task_recurrences where id = $1', [
      first.recurrence_series_id,
    ]);
    expect(rows[0]).to.deep.equal({ next_start: null, materialized_count: 3 });
    await materializer.runOnce(new Date('2030-01-01T00:00:00Z'));
    expect(await occurrences(first.recurrence_series_id)).to.have.length(3);
  });

  it('stops adding occurrences once a series is deleted', async () => {
    const start = new Date(Math.ceil(Date.now() / DAY_MS) * DAY_MS + DAY_MS);
    const first = await post('/tasks', { start_date: start.toISOString(), recurrence: { pattern: 'every_n_days' } });
    await pool.query('delete from tasks where recurrence_series_id = $1', [first.recurrence_series_id]);
    await pool.query('delete from task_recurrences where id = $1', [first.recurrence_series_id]);
    await materializer.runOnce(new Date(start.getTime() + 30 * DAY_MS));
    expect(await occurrences(first.recurrence_series_id)).to.deep.equal([]);
  });
});
