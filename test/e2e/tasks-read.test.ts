import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';
import { seedTaskTenant, TASK_FIELDS, type TaskTenant, tasksApi } from '../support/tasks.js';

const MISSING = '00000000-0000-7000-8000-000000000000';

describe('GET /integrations/external/tasks/{id} and GET /integrations/external/tasks', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let a: TaskTenant;
  let b: TaskTenant;
  let api: ReturnType<typeof tasksApi>;
  const make = async (body: Record<string, unknown>, tenant = a) => {
    const res = await api.create({ crm_task_type_id: tenant.types.call.id, ...body }, tenant.key.key);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const titles = (res: { body: { records: { title: string }[] } }) => res.body.records.map((r) => r.title);

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    a = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
    b = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
    api = tasksApi(call, () => a.key.key);
  });
  after(() => stack?.stop());

  describe('GET /tasks/{id}', () => {
    it('returns the full Task with its nested summaries, tags and subtasks', async () => {
      const parent = await make({
        title: 'Visit',
        crm_task_type_id: a.types.meeting.id,
        start_date: '2026-12-02T09:00:00Z',
        crm_lead_id: a.leads.team.id,
        tags: [a.tags.blue.id],
        responsible_id: a.other.user.id,
        meeting_mode: 'in_person',
        meeting_location: 'HQ',
        reminders_minutes: [15],
      });
      const sub = await make({ title: 'Prepare', parent_task_id: parent.id, crm_task_stage_id: a.stages.done.id });
      const res = await api.get(parent.id);
      expect(res.status, res.text).to.equal(200);
      const t = res.body;
      expect(t).to.have.all.keys(TASK_FIELDS);
      expect(t).to.include({ id: parent.id, title: 'Visit', meeting_location: 'HQ', end_date: '2026-12-02T09:30:00.000Z' });
      expect(t.crm_lead).to.deep.equal({ id: a.leads.team.id, title: 'Team lead', code: a.leads.team.code });
      expect(t.responsible).to.deep.equal({ id: a.other.user.id, name: 'Other', avatar: null });
      expect(t.tags).to.deep.equal([{ id: a.tags.blue.id, name: 'Blue', color: null }]);
      expect(t.crm_task_type).to.deep.equal({ id: a.types.meeting.id, name: 'Meeting', icon: 'calendar', is_meeting: true });
      expect(t.reminders_minutes).to.deep.equal([15]);
      expect(t.subtasks).to.have.length(1);
      expect(t.subtasks[0]).to.include({ id: sub.id, title: 'Prepare', is_subtask: true, hierarchy_level: 1 });
      expect(t.subtasks[0].parent_task).to.deep.equal({ id: parent.id, title: 'Visit' });
      expect(t.subtasks[0].completed_by).to.deep.equal({ id: a.user.id, name: 'Integrator', avatar: null });
      // What create answered is what GET answers (but for the subtasks created since).
      const { subtasks: _s1, ...afterCreate } = parent;
      const { subtasks: _s2, ...now } = t;
      expect(now).to.deep.equal(afterCreate);
    });

    it("answers another company's task, an unknown id and a malformed id with 404", async () => {
      const mine = await make({ title: 'Mine' });
      const res = await api.get(mine.id, b.key.key);
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ statusCode: 404, message: 'Task not found', error: 'Not Found' });
      expect((await api.get(MISSING)).status).to.equal(404);
      expect((await api.get('42')).status).to.equal(404);
    });

    it('shows a linked lead the viewer may not see by its id only, without its summary', async () => {
      const t = await make({ title: 'On my private lead', start_date: '2026-12-03T09:00:00Z', crm_lead_id: a.leads.ownPrivate.id });
      expect(t.crm_lead).to.include({ title: 'Own private lead' });
      const seenByOther = await api.get(t.id, a.other.key.key);
      expect(seenByOther.status).to.equal(200);
      expect(seenByOther.body.crm_lead_id).to.equal(a.leads.ownPrivate.id);
      expect(seenByOther.body.crm_lead).to.equal(null);
    });

    it('gives the actor`s meeting invitation-response eligibility', async () => {
      const t = await make({
        title: 'Sync',
        crm_task_type_id: a.types.meeting.id,
        meeting_participants: [a.other.user.email.toUpperCase(), 'guest@example.test'],
      });
      const asOther = (await api.get(t.id, a.other.key.key)).body;
      expect(asOther).to.include({
        meeting_self_attendee_email: a.other.user.email,
        meeting_can_manage_participants: true,
        meeting_can_respond: false,
        meeting_self_response_status: null,
        meeting_response: null,
      });
      expect((await api.get(t.id)).body.meeting_self_attendee_email, 'the integrator is not a participant').to.equal(null);
      const admin = adminOf(call, stack.adminToken);
      const reader = (
        await admin('POST', `/companies/${a.company.id}/keys`, { created_by_user_id: a.other.user.id, permissions: ['crm/task.read'] })
      ).body;
      expect((await api.get(t.id, reader.key)).body.meeting_can_manage_participants, 'without crm/task.update').to.equal(false);
      const call_ = await make({ title: 'Not a meeting', meeting_participants: [a.other.user.email] });
      expect((await api.get(call_.id, a.other.key.key)).body.meeting_can_manage_participants).to.equal(false);
    });

    it('needs crm/task.read', async () => {
      const admin = adminOf(call, stack.adminToken);
      const writer = (
        await admin('POST', `/companies/${a.company.id}/keys`, { created_by_user_id: a.user.id, permissions: ['crm/task.create'] })
      ).body;
      const t = await make({ title: 'x' });
      expect((await api.get(t.id, writer.key)).status).to.equal(403);
      expect((await api.list({}, writer.key)).status).to.equal(403);
    });
  });

  describe('GET /tasks', () => {
    let l: TaskTenant;
    let lapi: ReturnType<typeof tasksApi>;
    const ids: Record<string, any> = {};
    before(async () => {
      l = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
      lapi = tasksApi(call, () => l.key.key);
      const mk = (body: Record<string, unknown>) => make(body, l);
      ids.leadTask = await mk({ title: 'lead', start_date: '2026-12-01T10:00:00Z', crm_lead_id: l.leads.team.id });
      ids.personTask = await mk({ title: 'person', start_date: '2026-12-02T10:00:00Z', crm_person_id: l.person.id, tags: [l.tags.red.id] });
      ids.orgTask = await mk({ title: 'org', start_date: '2026-12-03T10:00:00Z', crm_organization_id: l.organization.id });
      ids.otherTask = await mk({
        title: 'other',
        start_date: '2026-12-04T10:00:00Z',
        responsible_id: l.other.user.id,
        crm_task_type_id: l.types.meeting.id,
        tags: [l.tags.red.id, l.tags.blue.id],
      });
      ids.doneTask = await mk({ title: 'done', start_date: '2026-12-05T10:00:00Z', crm_task_stage_id: l.stages.done.id });
      ids.undated = await mk({ title: 'undated', crm_task_stage_id: l.stages.doing.id });
      ids.sub1 = await mk({ title: 'sub of lead', parent_task_id: ids.leadTask.id, start_date: '2026-12-06T10:00:00Z' });
      ids.sub2 = await mk({ title: 'sub of lead, other', parent_task_id: ids.leadTask.id, responsible_id: l.other.user.id });
      await make({ title: 'company B', start_date: '2026-12-01T10:00:00Z' }, b);
    });

    it('lists the company`s tasks by start_date (undated last), with {total, records, next_cursor}', async () => {
      const res = await lapi.list();
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.have.all.keys('total', 'records', 'next_cursor');
      expect(res.body.total).to.equal(8);
      expect(titles(res)).to.deep.equal(['lead', 'person', 'org', 'other', 'done', 'sub of lead', 'undated', 'sub of lead, other']);
      expect(res.body.next_cursor).to.equal(null);
      expect(res.body.records[0]).to.include.all.keys(TASK_FIELDS.filter((f) => f !== 'subtasks'));
      expect(res.body.records[0]).to.not.have.property('subtasks');
      expect(res.body.records[0].crm_lead).to.deep.equal({ id: l.leads.team.id, title: 'Team lead', code: l.leads.team.code });
    });

    const filtered: [string, () => Record<string, string | boolean>, string[]][] = [
      ['crm_lead_id', () => ({ crm_lead_id: l.leads.team.id }), ['lead']],
      ['crm_person_id', () => ({ crm_person_id: l.person.id }), ['person']],
      ['crm_organization_id', () => ({ crm_organization_id: l.organization.id }), ['org']],
      ['responsible_id', () => ({ responsible_id: l.other.user.id }), ['other', 'sub of lead, other']],
      ['crm_task_type_id', () => ({ crm_task_type_id: l.types.meeting.id }), ['other']],
      ['crm_task_stage_id', () => ({ crm_task_stage_id: l.stages.doing.id }), ['undated']],
      ['completed=true', () => ({ completed: true }), ['done']],
      ['tag_id', () => ({ tag_id: l.tags.red.id }), ['person', 'other']],
      ['parent_task_id', () => ({ parent_task_id: ids.leadTask.id }), ['sub of lead', 'sub of lead, other']],
      [
        'date_from and date_to (inclusive)',
        () => ({ date_from: '2026-12-02T10:00:00Z', date_to: '2026-12-04T10:00:00Z' }),
        ['person', 'org', 'other'],
      ],
      ['date_to as a whole day', () => ({ date_from: '2026-12-05', date_to: '2026-12-06' }), ['done', 'sub of lead']],
      ['several filters together', () => ({ tag_id: l.tags.red.id, responsible_id: l.other.user.id }), ['other']],
    ];
    for (const [what, query, expected] of filtered) {
      it(`filters by ${what}`, async () => {
        const res = await lapi.list(query());
        expect(res.status, res.text).to.equal(200);
        expect(titles(res)).to.deep.equal(expected);
        expect(res.body.total).to.equal(expected.length);
      });
    }

    it('filters completed=false to the open tasks', async () => {
      const res = await lapi.list({ completed: false });
      expect(titles(res)).to.not.include('done');
      expect(res.body.total).to.equal(7);
    });

    it('never lists another company`s tasks, even filtered by its records', async () => {
      expect(titles(await lapi.list())).to.not.include('company B');
      expect((await lapi.list({ crm_lead_id: b.leads.team.id })).body.total).to.equal(0);
    });

    it('nests subtasks under their parent with hierarchy_mode=grouped, counting the top level', async () => {
      const res = await lapi.list({ hierarchy_mode: 'grouped' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.total).to.equal(6);
      expect(titles(res)).to.deep.equal(['lead', 'person', 'org', 'other', 'done', 'undated']);
      const lead = res.body.records[0];
      expect(lead.subtasks.map((s: any) => s.title)).to.deep.equal(['sub of lead', 'sub of lead, other']);
      expect(lead.subtasks[0].parent_task).to.deep.equal({ id: ids.leadTask.id, title: 'lead' });
      expect(res.body.records[1].subtasks).to.deep.equal([]);
    });

    it('lists a matching subtask on its own when its parent does not match (grouped)', async () => {
      const res = await lapi.list({ hierarchy_mode: 'grouped', responsible_id: l.other.user.id });
      expect(titles(res)).to.deep.equal(['other', 'sub of lead, other']);
      expect(res.body.records[1].parent_task).to.deep.equal({ id: ids.leadTask.id, title: 'lead' });
      const withParent = await lapi.list({ hierarchy_mode: 'grouped', crm_task_type_id: l.types.call.id, completed: false });
      const lead = withParent.body.records.find((r: any) => r.title === 'lead');
      expect(lead.subtasks.map((s: any) => s.title)).to.deep.equal(['sub of lead', 'sub of lead, other']);
    });

    it('pages with take and skip, and with next_cursor, each task once and in order', async () => {
      const all = titles(await lapi.list());
      const page = await lapi.list({ take: 3, skip: 2 });
      expect(titles(page)).to.deep.equal(all.slice(2, 5));
      expect(page.body.total).to.equal(8);
      const walked: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: any = await lapi.list(cursor ? { take: 3, cursor, skip: 5 } : { take: 3 });
        expect(res.status, res.text).to.equal(200);
        walked.push(...titles(res));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(walked).to.deep.equal(all);
      expect(pages).to.equal(3);
    });

    it('pages the grouped listing by top-level tasks', async () => {
      const first = await lapi.list({ hierarchy_mode: 'grouped', take: 4 });
      expect(titles(first)).to.deep.equal(['lead', 'person', 'org', 'other']);
      const second = await lapi.list({ hierarchy_mode: 'grouped', take: 4, cursor: first.body.next_cursor });
      expect(titles(second)).to.deep.equal(['done', 'undated']);
      expect(second.body.next_cursor).to.equal(null);
    });

    it('caps take at 100 and turns a negative skip into 0', async () => {
      expect(titles(await lapi.list({ take: 1000, skip: -5 }))).to.have.length(8);
      expect(titles(await lapi.list({ take: 1 }))).to.deep.equal(['lead']);
    });

    it('answers a bad query with 400 naming the parameter', async () => {
      for (const [query, field] of [
        [{ crm_lead_id: 'x' }, 'crm_lead_id'],
        [{ completed: 'maybe' }, 'completed'],
        [{ hierarchy_mode: 'tree' }, 'hierarchy_mode'],
        [{ date_from: 'yesterday' }, 'date_from'],
        [{ cursor: 'bm9wZQ' }, 'cursor'],
        [{ take: 'ten' }, 'take'],
        [{ colour: 'red' }, 'colour'],
      ] as [Record<string, string>, string][]) {
        const res = await lapi.list(query);
        expect(res.status, field).to.equal(400);
        expect(res.body.message).to.contain(field);
      }
    });
  });
});
