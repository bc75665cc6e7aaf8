import { expect } from 'chai';
import { client } from '../support/client.js';
import { type Stack, startStack } from '../support/stack.js';
import { seedTaskTenant, type TaskTenant, tasksApi } from '../support/tasks.js';

const HORIZON_DAYS = 30;
const DAY_MS = 86_400_000;

describe('recurring tasks: request shape, materialized occurrences, exceptions and series deletion', () => {
  let stack: Stack;
  let a: TaskTenant;
  let api: ReturnType<typeof tasksApi>;
  const make = async (body: Record<string, unknown>) => {
    const res = await api.create({ crm_task_type_id: a.types.call.id, title: 'Recurring', ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const series = async (seriesId: string) => {
    const res = await api.list({ recurrence_series_id: seriesId, take: 100 });
    expect(res.status, res.text).to.equal(200);
    return res.body.records as any[];
  };
  const starts = (tasks: any[]) => tasks.map((t) => t.start_date);

  before(async () => {
    stack = await startStack({ tasks: { RECURRENCE_HORIZON_DAYS: String(HORIZON_DAYS) } });
    const call = client(stack.gatewayUrl).call;
    a = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
    api = tasksApi(call, () => a.key.key);
  });
  after(() => stack?.stop());

  it('every N days, after N occurrences: each occurrence a task of the series with its index, duration and the response`s recurrence', async () => {
    const first = await make({
      crm_task_type_id: a.types.meeting.id,
      start_date: '2026-12-01T13:00:00Z',
      tags: [a.tags.red.id],
      recurrence: { pattern: 'every_n_days', interval: 2, end_type: 'after_occurrences', occurrences: 4 },
    });
    expect(first).to.include({ is_recurring: true, recurrence_index: 0, recurrence_is_exception: false });
    expect(first.recurrence).to.deep.equal({
      id: first.recurrence_series_id,
      pattern: 'every_n_days',
      interval: 2,
      week_days: [],
      end_type: 'after_occurrences',
      start_date: '2026-12-01T13:00:00.000Z',
      end_date: '2026-12-01T13:30:00.000Z',
      until_date: null,
      occurrences: 4,
      index: 0,
      is_exception: false,
    });
    const all = await series(first.recurrence_series_id);
    expect(starts(all)).to.deep.equal([
      '2026-12-01T13:00:00.000Z',
      '2026-12-03T13:00:00.000Z',
      '2026-12-05T13:00:00.000Z',
      '2026-12-07T13:00:00.000Z',
    ]);
    expect(all.map((t) => t.recurrence_index)).to.deep.equal([0, 1, 2, 3]);
    expect(all.map((t) => Date.parse(t.end_date) - Date.parse(t.start_date))).to.deep.equal(Array(4).fill(30 * 60_000));
    for (const t of all.slice(1)) {
      expect(t).to.include({ title: 'Recurring', is_recurring: true, recurrence_series_id: first.recurrence_series_id });
      expect(t.tags.map((x: any) => x.id)).to.deep.equal([a.tags.red.id]);
      expect(t.recurrence.index).to.equal(t.recurrence_index);
    }
  });

  it('weekly on given week days until a date, in the offset the start date was sent with', async () => {
    // Tuesday 22:00 at -03:00 is Wednesday 01:00 UTC: the series follows the local week days.
    const first = await make({
      start_date: '2026-12-01T22:00:00-03:00',
      recurrence: { pattern: 'weekly', week_days: ['thursday', 'tuesday'], end_type: 'on_date', until_date: '2026-12-15' },
    });
    expect(first.recurrence).to.include({ pattern: 'weekly', interval: 1, end_type: 'on_date' });
    expect(first.recurrence.week_days).to.deep.equal(['tuesday', 'thursday']);
    expect(first.recurrence.until_date).to.equal('2026-12-16T02:59:59.999Z');
    expect(starts(await series(first.recurrence_series_id))).to.deep.equal([
      '2026-12-02T01:00:00.000Z',
      '2026-12-04T01:00:00.000Z',
      '2026-12-09T01:00:00.000Z',
      '2026-12-11T01:00:00.000Z',
      '2026-12-16T01:00:00.000Z',
    ]);
  });

  it('weekly every other week on the start date`s day by default', async () => {
    const first = await make({
      start_date: '2026-11-30T09:00:00Z',
      recurrence: { pattern: 'weekly', interval: 2, end_type: 'after_occurrences', occurrences: 3 },
    });
    expect(first.recurrence.week_days).to.deep.equal(['monday']);
    expect(starts(await series(first.recurrence_series_id))).to.deep.equal([
      '2026-11-30T09:00:00.000Z',
      '2026-12-14T09:00:00.000Z',
      '2026-12-28T09:00:00.000Z',
    ]);
  });

  it('monthly on the start date`s day, on the last day of shorter months; a series with an end is created whole, past the horizon', async () => {
    const first = await make({
      start_date: '2027-01-31T10:00:00Z',
      recurrence: { pattern: 'monthly', end_type: 'after_occurrences', occurrences: 4 },
    });
    expect(starts(await series(first.recurrence_series_id))).to.deep.equal([
      '2027-01-31T10:00:00.000Z',
      '2027-02-28T10:00:00.000Z',
      '2027-03-31T10:00:00.000Z',
      '2027-04-30T10:00:00.000Z',
    ]);
  });

  it('never ending: occurrences exist up to RECURRENCE_HORIZON_DAYS ahead', async () => {
    const start = new Date(Math.ceil(Date.now() / DAY_MS) * DAY_MS + DAY_MS);
    const first = await make({ start_date: start.toISOString(), recurrence: { pattern: 'every_n_days', interval: 7 } });
    expect(first.recurrence).to.include({ end_type: 'none', until_date: null, occurrences: null });
    const all = await series(first.recurrence_series_id);
    // start + 0, 7, 14, 21 and 28 days are within 30 days of the start (the later of it and now).
    expect(all).to.have.length(5);
    expect(Date.parse(all[4].start_date) - start.getTime()).to.equal(28 * DAY_MS);
  });

  it('starts the first occurrence in a completion stage completed, and the others open', async () => {
    const first = await make({
      start_date: '2026-12-01T09:00:00Z',
      crm_task_stage_id: a.stages.done.id,
      recurrence: { pattern: 'every_n_days', end_type: 'after_occurrences', occurrences: 2 },
    });
    const [one, two] = await series(first.recurrence_series_id);
    expect(one.completed_at).to.be.a('string');
    expect(two).to.include({ completed_at: null, crm_task_stage_id: a.stages.todo.id });
  });

  describe('the request shape is checked (400 naming the field, nothing written)', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a recurrence without start_date', { recurrence: { pattern: 'every_n_days' } }, 'recurrence'],
      ['an unknown pattern', { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'yearly' } }, 'recurrence.pattern'],
      ['interval 0', { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'every_n_days', interval: 0 } }, 'recurrence.interval'],
      [
        'week days without the start date`s day',
        { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'weekly', week_days: ['monday'] } },
        'recurrence.week_days',
      ],
      [
        'week days on a daily pattern',
        { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'every_n_days', week_days: ['tuesday'] } },
        'recurrence.week_days',
      ],
      [
        'an unknown week day',
        { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'weekly', week_days: ['tue'] } },
        'recurrence.week_days',
      ],
      [
        'on_date without until_date',
        { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'monthly', end_type: 'on_date' } },
        'recurrence.until_date',
      ],
      [
        'until_date before start_date',
        { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'monthly', end_type: 'on_date', until_date: '2026-11-01' } },
        'recurrence.until_date',
      ],
      [
        'until_date with end_type none',
        { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'monthly', until_date: '2027-01-01' } },
        'recurrence.until_date',
      ],
      [
        'after_occurrences without occurrences',
        { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'monthly', end_type: 'after_occurrences' } },
        'recurrence.occurrences',
      ],
      ['an unknown field', { start_date: '2026-12-01T09:00:00Z', recurrence: { pattern: 'monthly', rrule: 'FREQ=DAILY' } }, 'rrule'],
    ];
    for (const [what, body, field] of cases) {
      it(`refuses ${what}`, async () => {
        const res = await api.create({ crm_task_type_id: a.types.call.id, title: 'Refused recurring', ...body });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.message).to.contain(field);
      });
    }
    it('wrote nothing for them', async () => {
      const res = await api.list({ take: 100 });
      expect(res.body.records.filter((t: any) => t.title === 'Refused recurring')).to.deep.equal([]);
    });
  });

  describe('changing and deleting occurrences', () => {
    it('marks an occurrence changed on its own as an exception; a stage change alone is not one', async () => {
      const first = await make({
        start_date: '2026-12-01T09:00:00Z',
        recurrence: { pattern: 'every_n_days', end_type: 'after_occurrences', occurrences: 3 },
      });
      const [, second, third] = await series(first.recurrence_series_id);
      const moved = (await api.update(second.id, { start_date: '2026-12-02T15:00:00Z' })).body;
      expect(moved).to.include({ recurrence_is_exception: true, recurrence_index: 1 });
      expect(moved.recurrence).to.include({ is_exception: true, index: 1 });
      const staged = (await api.update(third.id, { crm_task_stage_id: a.stages.doing.id })).body;
      expect(staged.recurrence_is_exception).to.equal(false);
      const untouched = (await api.update(third.id, { title: 'Recurring' })).body;
      expect(untouched.recurrence_is_exception, 'sending the same value changes nothing').to.equal(false);
    });

    it('starts a series from a plain task with PUT, and refuses a second recurrence on an occurrence', async () => {
      const plain = await make({ start_date: '2026-12-01T09:00:00Z' });
      const res = await api.update(plain.id, { recurrence: { pattern: 'every_n_days', end_type: 'after_occurrences', occurrences: 3 } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ id: plain.id, is_recurring: true, recurrence_index: 0 });
      const all = await series(res.body.recurrence_series_id);
      expect(all.map((t) => t.id)[0]).to.equal(plain.id);
      expect(all).to.have.length(3);
      const again = await api.update(all[1].id, { recurrence: { pattern: 'monthly' } });
      expect(again.status).to.equal(400);
      expect(again.body.message).to.contain('recurrence');
    });

    it('deletes one occurrence, or the whole series with scope=series', async () => {
      const first = await make({
        start_date: '2026-12-01T09:00:00Z',
        recurrence: { pattern: 'every_n_days', end_type: 'after_occurrences', occurrences: 4 },
      });
      const all = await series(first.recurrence_series_id);
      expect((await api.remove(all[1].id)).body.deleted_ids).to.deep.equal([all[1].id]);
      expect((await series(first.recurrence_series_id)).map((t) => t.recurrence_index)).to.deep.equal([0, 2, 3]);
      const res = await api.remove(all[2].id, '?scope=series');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.deleted_ids).to.have.members([all[0].id, all[2].id, all[3].id]);
      expect(await series(first.recurrence_series_id)).to.deep.equal([]);
    });
  });
});
