import { expect } from 'chai';
import type { client } from '../support/client.js';
import { adminOf, seedTenant } from '../support/fixtures.js';
import type { Stack } from '../support/stack.js';
import { openTaskTenants, seedTaskTenant, TASK_FIELDS, type TaskTenant, type tasksApi } from '../support/tasks.js';

const MISSING = '00000000-0000-7000-8000-000000000000';
const START = '2026-12-01T13:00:00.000Z';

describe('POST /integrations/external/tasks: every rule of the spec`s Tasks table', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let a: TaskTenant;
  let b: TaskTenant;
  let api: ReturnType<typeof tasksApi>;
  const base = () => ({ crm_task_type_id: a.types.call.id, title: 'A task' });
  const created = async (body: Record<string, unknown>) => {
    const res = await api.create({ ...base(), ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const refused = async (body: Record<string, unknown>, field: string, tenant = a) => {
    const res = await api.create({ crm_task_type_id: tenant.types.call.id, title: 'Refused', ...body }, tenant.key.key);
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error).to.equal('Bad Request');
    expect(res.body.message).to.contain(field);
    return res.body.message as string;
  };

  before(async () => {
    ({ stack, call, admin, a, b, api } = await openTaskTenants());
  });
  after(() => stack?.stop());

  describe('defaults and the response', () => {
    it('answers 201 with every field of the spec`s Task, defaults filled and unknown sources null or empty', async () => {
      const res = await api.create({ crm_task_type_id: a.types.call.id, title: '  Call the client  ' });
      expect(res.status, res.text).to.equal(201);
      const t = res.body;
      expect(t).to.have.all.keys(TASK_FIELDS);
      expect(t.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(t).to.include({
        title: 'Call the client',
        description: null,
        is_personal: false,
        priority: 1,
        has_time: true,
        start_date: null,
        end_date: null,
        completed_at: null,
        crm_task_type_id: a.types.call.id,
        crm_task_stage_id: a.stages.todo.id,
        responsible_id: a.user.id,
        parent_task_id: null,
        is_recurring: false,
        recurrence: null,
        recurrence_series_id: null,
        origin: 'SVC',
        is_actionable: true,
        hierarchy_level: 0,
        is_subtask: false,
        parent_task: null,
        ai_processed: false,
        ai_generated: false,
        ai_status: null,
        calendar_lifecycle_status: null,
        meeting_event: null,
        meeting_sync: null,
        sync: null,
        meeting_link: null,
        calendar_event_url: null,
        sync_warning: null,
        meeting_can_respond: false,
      });
      expect(t.created_by).to.deep.equal({ id: a.user.id, name: 'Integrator', avatar: null });
      expect(t.responsible).to.deep.equal(t.created_by);
      expect(t.completed_by).to.equal(null);
      expect(t.crm_task_type).to.deep.equal({ id: a.types.call.id, name: 'Call', icon: 'phone', is_meeting: false });
      expect(t.crm_task_stage).to.deep.equal({ id: a.stages.todo.id, name: 'To do', color: '#999999', is_completion: false, position: 1 });
      for (const empty of [
        'tags',
        'mentions',
        'recordings',
        'reminders_minutes',
        'meeting_participants',
        'attendees',
        'comments',
        'subtasks',
      ]) {
        expect(t[empty], empty).to.deep.equal([]);
      }
      for (const none of ['crm_lead', 'crm_deal', 'crm_delivery', 'crm_person', 'crm_organization', 'crm_customer'])
        expect(t[none], none).to.equal(null);
      expect(new Date(t.created_at).toISOString()).to.equal(t.created_at);
      expect(t.updated_at).to.equal(t.created_at);
    });

    it('uses the first active stage that is not a completion stage when none is sent', async () => {
      const t = await seedTenant(call, stack.adminToken);
      const cid = t.company.id;
      const type = (await admin('POST', `/companies/${cid}/task-types`, { name: 'Call' })).body;
      await admin('POST', `/companies/${cid}/task-stages`, { name: 'Done first', is_completion: true });
      await admin('POST', `/companies/${cid}/task-stages`, { name: 'Inactive', active: false });
      const open = (await admin('POST', `/companies/${cid}/task-stages`, { name: 'Open' })).body;
      await admin('POST', `/companies/${cid}/task-stages`, { name: 'Open later' });
      const res = await api.create({ crm_task_type_id: type.id, title: 'x' }, t.key.key);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.crm_task_stage).to.include({ id: open.id, name: 'Open', is_completion: false });
      expect(res.body.completed_at).to.equal(null);
    });

    it('refuses a task when the company has no open stage to put it in (400 on crm_task_stage_id)', async () => {
      const t = await seedTenant(call, stack.adminToken);
      const type = (await admin('POST', `/companies/${t.company.id}/task-types`, { name: 'Call' })).body;
      await admin('POST', `/companies/${t.company.id}/task-stages`, { name: 'Done', is_completion: true });
      const res = await api.create({ crm_task_type_id: type.id, title: 'x' }, t.key.key);
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain('crm_task_stage_id:');
    });

    it('creates the task completed in a completion stage: completed_at and completed_by are the actor`s', async () => {
      const before = Date.now();
      const t = await created({ crm_task_stage_id: a.stages.done.id });
      expect(t.crm_task_stage.is_completion).to.equal(true);
      expect(Date.parse(t.completed_at)).to.be.within(before - 1000, Date.now() + 1000);
      expect(t.completed_by).to.deep.equal({ id: a.user.id, name: 'Integrator', avatar: null });
      expect(t.is_actionable).to.equal(false);
    });

    it('takes an explicit open stage, and refuses an inactive, unknown or another company`s stage', async () => {
      expect((await created({ crm_task_stage_id: a.stages.doing.id })).crm_task_stage.name).to.equal('Doing');
      expect(await refused({ crm_task_stage_id: a.stages.inactive.id }, 'crm_task_stage_id')).to.contain('not active');
      await refused({ crm_task_stage_id: MISSING }, 'crm_task_stage_id');
      await refused({ crm_task_stage_id: b.stages.todo.id }, 'crm_task_stage_id');
    });
  });

  describe('type and title', () => {
    it('requires crm_task_type_id, a type of the company', async () => {
      const res = await api.create({ title: 'x' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain('crm_task_type_id');
      await refused({ crm_task_type_id: MISSING }, 'crm_task_type_id');
      await refused({ crm_task_type_id: b.types.call.id }, 'crm_task_type_id');
      await refused({ crm_task_type_id: 'call' }, 'crm_task_type_id');
    });
    it('takes a title of 1 to 100 characters, trimmed', async () => {
      expect((await created({ title: 'x'.repeat(100) })).title).to.have.length(100);
      expect((await created({ title: 'y' })).title).to.equal('y');
      await refused({ title: 'x'.repeat(101) }, 'title');
      await refused({ title: '   ' }, 'title');
      await refused({ title: '' }, 'title');
      const res = await api.create({ crm_task_type_id: a.types.call.id });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain('title');
    });
  });

  describe('links to crm records (checked with crm over gRPC)', () => {
    it('refuses two links at once, naming the second', async () => {
      expect(await refused({ start_date: START, crm_lead_id: a.leads.team.id, crm_person_id: a.person.id }, 'crm_person_id')).to.contain(
        'at most one',
      );
    });
    it('needs start_date for a lead or a deal link', async () => {
      await refused({ crm_lead_id: a.leads.team.id }, 'crm_lead_id');
      expect(await refused({ crm_deal_id: MISSING }, 'crm_deal_id')).to.contain('start_date');
    });
    it('links a lead the key creator can see, with its summary {id, title, code}', async () => {
      for (const lead of [a.leads.team, a.leads.ownPrivate]) {
        const t = await created({ start_date: START, crm_lead_id: lead.id });
        expect(t.crm_lead_id).to.equal(lead.id);
        expect(t.crm_lead).to.deep.equal({ id: lead.id, title: lead.title, code: lead.code });
      }
    });
    it('answers a private lead of someone else, another company`s lead and an unknown lead alike: 400 lead not found', async () => {
      const messages = new Set<string>();
      for (const id of [a.leads.privateToMaster.id, b.leads.team.id, MISSING]) {
        messages.add(await refused({ start_date: START, crm_lead_id: id }, 'crm_lead_id'));
      }
      expect([...messages]).to.deep.equal(['crm_lead_id: lead not found']);
    });
    it('links a deal the key creator can see, with its summary {id, title, code}; refuses others alike', async () => {
      const deal = async (tenant: TaskTenant, body: Record<string, unknown>) => {
        const res = await call('POST', '/integrations/external/deals', { token: tenant.key.key, body });
        expect(res.status, res.text).to.equal(201);
        return res.body;
      };
      const own = await deal(a, { title: 'Own deal' });
      const t = await created({ start_date: START, crm_deal_id: own.id });
      expect(t.crm_deal_id).to.equal(own.id);
      expect(t.crm_deal).to.deep.equal({ id: own.id, title: 'Own deal', code: own.code });
      const otherCompany = await deal(b, { title: 'B deal', visibility: 1 });
      const privateOfOther = (
        await call('POST', '/integrations/external/deals', { token: a.other.key.key, body: { title: 'Private of another user' } })
      ).body;
      const messages = new Set<string>();
      for (const id of [otherCompany.id, privateOfOther.id, a.leads.team.id, MISSING]) {
        messages.add(await refused({ start_date: START, crm_deal_id: id }, 'crm_deal_id'));
      }
      expect([...messages]).to.deep.equal(['crm_deal_id: deal not found']);
    });
    it('links a delivery of the company, with its summary {id, title, code, status} from crm; refuses others alike', async () => {
      const delivery = async (tenant: TaskTenant, title: string) => {
        const base = `/companies/${tenant.company.id}`;
        const pipelines = await admin('POST', `${base}/delivery-pipelines`, { name: 'Delivery', stages: [{ name: 'Start' }] });
        expect(pipelines.status, pipelines.text).to.equal(201);
        const res = await admin('POST', `${base}/deliveries`, { user_id: tenant.user.id, title });
        expect(res.status, res.text).to.equal(201);
        return res.body;
      };
      const own = await delivery(a, 'Rollout');
      const t = await created({ crm_delivery_id: own.id });
      expect(t.crm_delivery_id).to.equal(own.id);
      expect(t.crm_delivery).to.deep.equal({ id: own.id, title: 'Rollout', code: own.code, status: 1 });
      await admin('POST', `/companies/${a.company.id}/deliveries/${own.id}/complete`, { user_id: a.user.id });
      const read = await api.get(t.id);
      expect(read.body.crm_delivery).to.deep.equal({ id: own.id, title: 'Rollout', code: own.code, status: 3 });
      const listed = await call('GET', `/integrations/external/tasks?crm_delivery_id=${own.id}`, { token: a.key.key });
      expect(listed.body.records.map((r: any) => r.id)).to.deep.equal([t.id]);
      const theirs = await delivery(b, 'Not yours');
      const messages = new Set<string>();
      for (const id of [theirs.id, MISSING]) messages.add(await refused({ crm_delivery_id: id }, 'crm_delivery_id'));
      expect([...messages]).to.deep.equal(['crm_delivery_id: delivery not found']);
    });
    it('refuses an unknown customer id (customers.test.ts links them)', async () => {
      await refused({ crm_customer_id: MISSING }, 'crm_customer_id');
    });
    it('links a person and an organization of the company, with their summaries, without needing a date', async () => {
      const p = await created({ crm_person_id: a.person.id });
      expect(p.crm_person).to.deep.equal({ id: a.person.id, name: 'Ana Person' });
      const o = await created({ crm_organization_id: a.organization.id });
      expect(o.crm_organization).to.deep.equal({ id: a.organization.id, name: 'Org', legal_name: 'Org Legal Ltd' });
      await refused({ crm_person_id: b.person.id }, 'crm_person_id');
      await refused({ crm_organization_id: b.organization.id }, 'crm_organization_id');
    });
    it('takes ids in upper case as the same ids', async () => {
      const t = await created({ crm_person_id: a.person.id.toUpperCase(), tags: [a.tags.red.id.toUpperCase()] });
      expect(t.crm_person_id).to.equal(a.person.id);
      expect(t.crm_person).to.deep.equal({ id: a.person.id, name: 'Ana Person' });
      expect(t.tags.map((x: any) => x.id)).to.deep.equal([a.tags.red.id]);
    });
  });

  describe('dates', () => {
    it('computes end_date from the type`s default duration when omitted, and keeps one that is sent', async () => {
      const meeting = await created({ crm_task_type_id: a.types.meeting.id, start_date: '2026-12-01T10:00:00-03:00' });
      expect(meeting.start_date).to.equal(START);
      expect(meeting.end_date).to.equal('2026-12-01T13:30:00.000Z');
      expect((await created({ start_date: START })).end_date, 'a type without a default duration').to.equal(null);
      const sent = await created({ crm_task_type_id: a.types.meeting.id, start_date: START, end_date: '2026-12-01T15:00:00Z' });
      expect(sent.end_date).to.equal('2026-12-01T15:00:00.000Z');
    });
    it('refuses end_date without start_date, or before it', async () => {
      await refused({ end_date: START }, 'end_date');
      expect(await refused({ start_date: START, end_date: '2026-12-01T12:59:59Z' }, 'end_date')).to.contain('before');
      await refused({ start_date: 'tomorrow' }, 'start_date');
    });
    it('has_time false is a whole-day task: no end_date, not even the type`s default, and one sent is refused', async () => {
      const day = await created({ crm_task_type_id: a.types.meeting.id, start_date: '2026-12-24', has_time: false });
      expect(day).to.include({ has_time: false, start_date: '2026-12-24T00:00:00.000Z', end_date: null });
      expect(await refused({ start_date: START, end_date: '2026-12-02T13:00:00Z', has_time: false }, 'end_date')).to.contain('whole-day');
    });
  });

  describe('priority, meeting fields and reminders', () => {
    it('takes priority 0 to 3 only', async () => {
      for (const priority of [0, 3]) expect((await created({ priority })).priority).to.equal(priority);
      for (const priority of [-1, 4, 1.5, '2']) await refused({ priority }, 'priority');
    });
    it('takes meeting_outcome 1 to 4 only on a task whose type is a meeting', async () => {
      const t = await created({ crm_task_type_id: a.types.meeting.id, meeting_outcome: 4, meeting_outcome_notes: 'moved' });
      expect(t).to.include({ meeting_outcome: 4, meeting_outcome_notes: 'moved' });
      for (const meeting_outcome of [0, 5]) await refused({ crm_task_type_id: a.types.meeting.id, meeting_outcome }, 'meeting_outcome');
      expect(await refused({ meeting_outcome: 1 }, 'meeting_outcome')).to.contain('meeting');
    });
    it('trims, lower-cases and de-duplicates meeting participants, and refuses what is not an e-mail', async () => {
      const t = await created({ meeting_participants: [' Ana@Example.TEST ', 'ana@example.test', 'bob@example.test'] });
      expect(t.meeting_participants).to.deep.equal(['ana@example.test', 'bob@example.test']);
      await refused({ meeting_participants: ['not an e-mail'] }, 'meeting_participants');
    });
    it('takes meeting_provider from the spec`s two values (provider mirrors it)', async () => {
      const t = await created({ meeting_provider: 'google_calendar_integration' });
      expect(t).to.include({ meeting_provider: 'google_calendar_integration', provider: 'google_calendar_integration' });
      await refused({ meeting_provider: 'zoom' }, 'meeting_provider');
    });
    it('takes reminders_minutes (integers >= 1) only on a task with a date and time', async () => {
      const t = await created({ start_date: START, reminders_minutes: [30, 10, 30] });
      expect(t.reminders_minutes).to.deep.equal([30, 10]);
      await refused({ start_date: START, reminders_minutes: [0] }, 'reminders_minutes');
      await refused({ start_date: START, reminders_minutes: [1.5] }, 'reminders_minutes');
      await refused({ reminders_minutes: [10] }, 'reminders_minutes');
      await refused({ start_date: '2026-12-24', has_time: false, reminders_minutes: [10] }, 'reminders_minutes');
    });
    it('requires meeting_location (1 to 500) for in_person, refuses it for online', async () => {
      const inPerson = await created({ meeting_mode: 'in_person', meeting_location: '  Room 4  ' });
      expect(inPerson).to.include({ meeting_mode: 'in_person', meeting_location: 'Room 4' });
      expect((await created({ meeting_mode: 'online' })).meeting_location).to.equal(null);
      expect((await created({ meeting_mode: 'in_person', meeting_location: 'x'.repeat(500) })).meeting_location).to.have.length(500);
      await refused({ meeting_mode: 'in_person' }, 'meeting_location');
      await refused({ meeting_mode: 'online', meeting_location: 'Room 4' }, 'meeting_location');
      await refused({ meeting_mode: 'in_person', meeting_location: 'x'.repeat(501) }, 'meeting_location');
      await refused({ meeting_mode: 'in_person', meeting_location: '  ' }, 'meeting_location');
      await refused({ meeting_mode: 'hybrid' }, 'meeting_mode');
    });
  });

  describe('HTML', () => {
    it('keeps basic formatting, lists, tables and links in description; removes scripts, images, embeds and handlers', async () => {
      const t = await created({
        description:
          '<p onclick="alert(1)">Hi <b>bold</b> <i>it</i></p><ul><li>one</li></ul><table><tr><td colspan="2">cell</td></tr></table>' +
          '<a href="https://example.test/x" onmouseover="x()">link</a><a href="javascript:alert(1)">bad</a>' +
          '<script>alert(1)</script><img src=x onerror=alert(1)><iframe src="https://evil.test"></iframe><embed src="x.swf"><object data="x"></object>',
      });
      expect(t.description).to.equal(
        '<p>Hi <b>bold</b> <i>it</i></p><ul><li>one</li></ul><table><tr><td colspan="2">cell</td></tr></table>' +
          '<a href="https://example.test/x" rel="noopener noreferrer nofollow">link</a><a rel="noopener noreferrer nofollow">bad</a>',
      );
    });
    it('takes plain text as text, escaped for HTML', async () => {
      expect((await created({ description: 'a < b & c' })).description).to.equal('a &lt; b &amp; c');
    });
    it('keeps basic formatting in meeting_description, and at most 5000 characters of normalized text', async () => {
      const t = await created({ meeting_description: '<p>Agenda: <b>one</b></p><table><tr><td>t</td></tr></table><script>x</script>' });
      expect(t.meeting_description).to.equal('<p>Agenda: <b>one</b></p>t');
      // Markup does not count: 5000 letters inside plenty of tags pass, 5001 do not.
      const wrapped = (n: number) => `<p><b>${'x'.repeat(n - 1)}</b></p><p>${'<i></i>'.repeat(200)}y</p>`;
      expect((await created({ meeting_description: wrapped(5000) })).meeting_description).to.have.length.above(5000);
      expect(await refused({ meeting_description: wrapped(5001) }, 'meeting_description')).to.contain('5000');
    });
  });

  describe('subtasks, tags and the responsible user', () => {
    it('creates a subtask of a top-level task, and refuses deeper nesting, unknown parents and a subtask`s recurrence', async () => {
      const parent = await created({ title: 'Parent' });
      const sub = await created({ title: 'Sub', parent_task_id: parent.id });
      expect(sub).to.include({ parent_task_id: parent.id, hierarchy_level: 1, is_subtask: true });
      expect(sub.parent_task).to.deep.equal({ id: parent.id, title: 'Parent' });
      expect(await refused({ parent_task_id: sub.id }, 'parent_task_id')).to.contain('subtask');
      await refused({ parent_task_id: MISSING }, 'parent_task_id');
      const bTask = (await api.create({ crm_task_type_id: b.types.call.id, title: 'B' }, b.key.key)).body;
      await refused({ parent_task_id: bTask.id }, 'parent_task_id');
      expect(
        await refused({ parent_task_id: parent.id, start_date: START, recurrence: { pattern: 'every_n_days' } }, 'recurrence'),
      ).to.contain('subtask');
    });
    it('takes tags by id and shows them as {id, name, color}', async () => {
      const t = await created({ tags: [a.tags.red.id, a.tags.blue.id, a.tags.red.id] });
      expect(t.tags).to.deep.equal([
        { id: a.tags.red.id, name: 'Red', color: { background: '#ff0000', foreground: '#ffffff' } },
        { id: a.tags.blue.id, name: 'Blue', color: null },
      ]);
      await refused({ tags: [a.tags.red.id, b.tags.red.id] }, 'tags');
      await refused({ tags: [MISSING] }, 'tags');
      await refused({ tags: ['red'] }, 'tags');
    });
    it('takes another active user of the company as responsible, and refuses others', async () => {
      const t = await created({ responsible_id: a.other.user.id });
      expect(t.responsible).to.deep.equal({ id: a.other.user.id, name: 'Other', avatar: null });
      expect(t.created_by.id).to.equal(a.user.id);
      await refused({ responsible_id: b.user.id }, 'responsible_id');
      await refused({ responsible_id: MISSING }, 'responsible_id');
      const away = (await admin('POST', `/companies/${a.company.id}/users`, { name: 'Away', email: `away-${Date.now()}@example.test` }))
        .body;
      await admin('PATCH', `/companies/${a.company.id}/users/${away.id}`, { active: false });
      await refused({ responsible_id: away.id }, 'responsible_id');
    });
  });

  describe('refused requests write nothing', () => {
    it('refuses an unknown field by name, malformed JSON, and leaves a fresh company without tasks after every refusal', async () => {
      const v = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
      const bad: [Record<string, unknown>, string][] = [
        [{ phone: '1' }, 'phone'],
        [{ title: 'x'.repeat(101) }, 'title'],
        [{ crm_task_stage_id: v.stages.inactive.id }, 'crm_task_stage_id'],
        [{ crm_lead_id: v.leads.team.id }, 'crm_lead_id'],
        [{ start_date: START, crm_lead_id: v.leads.privateToMaster.id }, 'crm_lead_id'],
        [{ end_date: START }, 'end_date'],
        [{ priority: 9 }, 'priority'],
        [{ meeting_outcome: 2 }, 'meeting_outcome'],
        [{ reminders_minutes: [5] }, 'reminders_minutes'],
        [{ tags: [a.tags.red.id] }, 'tags'],
        [{ meeting_mode: 'in_person' }, 'meeting_location'],
        [{ responsible_id: a.user.id }, 'responsible_id'],
        [{ crm_task_stage_id: v.stages.done.id, tags: [MISSING] }, 'tags'],
        [{ start_date: START, recurrence: { pattern: 'weekly', week_days: ['monday'] } }, 'recurrence.week_days'],
      ];
      for (const [body, field] of bad) await refused(body, field, v);
      const malformed = await call('POST', '/integrations/external/tasks', { token: v.key.key, rawBody: '{"title":' });
      expect(malformed.status).to.equal(400);
      const list = await api.list({}, v.key.key);
      expect(list.status, list.text).to.equal(200);
      expect(list.body.total).to.equal(0);
      expect(list.body.records).to.deep.equal([]);
    });
  });

  describe('the management API`s task-types and task-stages rows (through the gateway)', () => {
    it('creates types and stages with the documented shapes, stages last by default', async () => {
      const t = await seedTenant(call, stack.adminToken);
      const base = `/companies/${t.company.id}`;
      const type = await admin('POST', `${base}/task-types`, {
        name: 'Visit',
        icon: 'car',
        is_meeting: true,
        default_duration_minutes: 45,
      });
      expect(type.status, type.text).to.equal(201);
      expect(type.body).to.deep.equal({ id: type.body.id, name: 'Visit', icon: 'car', is_meeting: true, default_duration_minutes: 45 });
      const first = await admin('POST', `${base}/task-stages`, { name: 'New', color: '#123456' });
      const done = await admin('POST', `${base}/task-stages`, { name: 'Done', is_completion: true });
      expect(first.body).to.deep.equal({
        id: first.body.id,
        name: 'New',
        color: '#123456',
        is_completion: false,
        position: 1,
        active: true,
      });
      expect(done.body).to.include({ position: 2, is_completion: true, active: true });
    });
    it('answers 400 naming the field, 404 for an unknown company, 401 to an integration key', async () => {
      const bad = await admin('POST', `/companies/${a.company.id}/task-types`, { name: '', default_duration_minutes: 0 });
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.contain('name').and.to.contain('default_duration_minutes');
      const unknown = await admin('POST', `/companies/${MISSING}/task-stages`, { name: 'x' });
      expect(unknown.status).to.equal(404);
      const asKey = await call('POST', `/admin/v1/companies/${a.company.id}/task-types`, { token: a.key.key, body: { name: 'x' } });
      expect(asKey.status).to.equal(401);
    });
  });

  describe('keys and permissions', () => {
    it('needs crm/task.create (403 without it), and a key (401)', async () => {
      const admin_ = adminOf(call, stack.adminToken);
      const readOnly = (
        await admin_('POST', `/companies/${a.company.id}/keys`, { created_by_user_id: a.user.id, permissions: ['crm/task.read'] })
      ).body;
      const res = await api.create(base(), readOnly.key);
      expect(res.status).to.equal(403);
      expect(res.body.message).to.contain('crm/task.create');
      const writer = (
        await admin_('POST', `/companies/${a.company.id}/keys`, { created_by_user_id: a.user.id, permissions: ['crm/task.create'] })
      ).body;
      expect((await api.create(base(), writer.key)).status).to.equal(201);
      const anonymous = await call('POST', '/integrations/external/tasks', { body: base() });
      expect(anonymous.status).to.equal(401);
    });
  });
});
