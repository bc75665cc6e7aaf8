import { expect } from 'chai';
import type { adminOf } from '../support/fixtures.js';
import type { Stack } from '../support/stack.js';
import { openTaskTenants, type TaskTenant, type tasksApi } from '../support/tasks.js';

const START = '2026-12-01T13:00:00.000Z';

describe('PUT and DELETE /integrations/external/tasks/{id}', () => {
  let stack: Stack;
  let admin: ReturnType<typeof adminOf>;
  let a: TaskTenant;
  let b: TaskTenant;
  let api: ReturnType<typeof tasksApi>;
  const make = async (body: Record<string, unknown> = {}) => {
    const res = await api.create({ crm_task_type_id: a.types.call.id, title: 'Task', ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const put = async (id: string, body: Record<string, unknown>) => {
    const res = await api.update(id, body);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  before(async () => {
    ({ stack, admin, a, b, api } = await openTaskTenants());
  });
  after(() => stack?.stop());

  describe('PUT', () => {
    it('changes the fields sent, keeps the others, and null clears', async () => {
      const t = await make({ description: '<b>old</b>', priority: 2, tags: [a.tags.red.id], start_date: START });
      const u = await put(t.id, { title: 'Renamed', description: null, tags: [a.tags.blue.id] });
      expect(u).to.include({ id: t.id, title: 'Renamed', description: null, priority: 2, start_date: START, created_at: t.created_at });
      expect(u.tags.map((x: any) => x.name)).to.deep.equal(['Blue']);
      expect(Date.parse(u.updated_at)).to.be.at.least(Date.parse(t.updated_at));
      expect((await api.get(t.id)).body).to.deep.equal(u);
    });

    it('moves end_date with start_date (same duration), and clears it with start_date', async () => {
      const t = await make({ crm_task_type_id: a.types.meeting.id, start_date: START });
      expect(t.end_date).to.equal('2026-12-01T13:30:00.000Z');
      const moved = await put(t.id, { start_date: '2026-12-08T10:00:00Z' });
      expect(moved).to.include({ start_date: '2026-12-08T10:00:00.000Z', end_date: '2026-12-08T10:30:00.000Z' });
      const cleared = await put(t.id, { start_date: null });
      expect(cleared).to.include({ start_date: null, end_date: null });
    });

    it('applies the creation rules to the task as it will be (400 naming the field, nothing changed)', async () => {
      const t = await make({ crm_task_type_id: a.types.meeting.id, start_date: START, crm_lead_id: a.leads.team.id, meeting_outcome: 1 });
      const before = (await api.get(t.id)).body;
      const bad: [Record<string, unknown>, string][] = [
        [{ title: '' }, 'title'],
        [{ start_date: null }, 'crm_lead_id'],
        [{ crm_task_type_id: a.types.call.id }, 'meeting_outcome'],
        [{ end_date: '2026-12-01T12:00:00Z' }, 'end_date'],
        [{ has_time: false, end_date: '2026-12-02T12:00:00Z' }, 'end_date'],
        [{ reminders_minutes: [0] }, 'reminders_minutes'],
        [{ priority: 4 }, 'priority'],
        [{ crm_person_id: a.person.id, crm_organization_id: a.organization.id }, 'crm_organization_id'],
        [{ crm_lead_id: a.leads.privateToMaster.id }, 'crm_lead_id'],
        [{ crm_lead_id: b.leads.team.id }, 'crm_lead_id'],
        [{ tags: [b.tags.red.id] }, 'tags'],
        [{ responsible_id: b.user.id }, 'responsible_id'],
        [{ crm_task_stage_id: b.stages.done.id }, 'crm_task_stage_id'],
        [{ meeting_mode: 'in_person' }, 'meeting_location'],
        [{ parent_task_id: t.id }, 'parent_task_id'],
        [{ completed: 'yes' }, 'completed'],
        [{ id: t.id }, 'id'],
      ];
      for (const [body, field] of bad) {
        const res = await api.update(t.id, body);
        expect(res.status, `${field}: ${res.text}`).to.equal(400);
        expect(res.body.message).to.contain(field);
      }
      expect((await api.get(t.id)).body).to.deep.equal(before);
    });

    it('replaces the link with the one sent', async () => {
      const t = await make({ start_date: START, crm_lead_id: a.leads.team.id });
      const u = await put(t.id, { crm_person_id: a.person.id });
      expect(u).to.include({ crm_lead_id: null, crm_person_id: a.person.id, crm_lead: null });
      expect(u.crm_person).to.deep.equal({ id: a.person.id, name: 'Ana Person' });
      expect((await put(t.id, { crm_person_id: null })).crm_person_id).to.equal(null);
    });

    it('keeps a stored link the actor cannot see when other fields change', async () => {
      const t = await make({ start_date: START, crm_lead_id: a.leads.ownPrivate.id });
      const res = await api.update(t.id, { title: 'Changed by another user' }, a.other.key.key);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.crm_lead_id).to.equal(a.leads.ownPrivate.id);
    });

    it('completes by stage and reopens by stage; completed_by is the actor', async () => {
      const t = await make();
      const done = (await api.update(t.id, { crm_task_stage_id: a.stages.done.id }, a.other.key.key)).body;
      expect(done.completed_at).to.be.a('string');
      expect(done.completed_by).to.deep.equal({ id: a.other.user.id, name: 'Other', avatar: null });
      expect(done.is_actionable).to.equal(false);
      const again = await put(t.id, { title: 'Still done' });
      expect(again.completed_at, 'another change keeps the completion').to.equal(done.completed_at);
      const reopened = await put(t.id, { crm_task_stage_id: a.stages.doing.id });
      expect(reopened).to.include({ completed_at: null, completed_by: null, is_actionable: true });
    });

    it('completes with completed: true (to the completion stage) and reopens with false (to the first open stage)', async () => {
      const t = await make({ crm_task_stage_id: a.stages.doing.id });
      const done = await put(t.id, { completed: true });
      expect(done.crm_task_stage_id).to.equal(a.stages.done.id);
      expect(done.completed_by.id).to.equal(a.user.id);
      const open = await put(t.id, { completed: false });
      expect(open).to.include({ crm_task_stage_id: a.stages.todo.id, completed_at: null });
      const res = await api.update(t.id, { completed: false, crm_task_stage_id: a.stages.done.id });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain('completed');
    });

    it('refuses to make a task with subtasks a subtask', async () => {
      const parent = await make({ title: 'P' });
      await make({ title: 'S', parent_task_id: parent.id });
      const other = await make({ title: 'O' });
      const res = await api.update(parent.id, { parent_task_id: other.id });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain('parent_task_id');
      const moved = await put(other.id, { parent_task_id: parent.id });
      expect(moved.parent_task).to.deep.equal({ id: parent.id, title: 'P' });
      expect((await api.get(parent.id)).body.subtasks.map((s: any) => s.title)).to.deep.equal(['S', 'O']);
    });

    it("answers another company's task with 404 and leaves it alone; needs crm/task.update", async () => {
      const t = await make({ title: 'Untouched' });
      const res = await api.update(t.id, { title: 'Hijacked' }, b.key.key);
      expect(res.status).to.equal(404);
      expect((await api.update('nope', { title: 'x' })).status).to.equal(404);
      const reader = (
        await admin('POST', `/companies/${a.company.id}/keys`, { created_by_user_id: a.user.id, permissions: ['crm/task.read'] })
      ).body;
      expect((await api.update(t.id, { title: 'x' }, reader.key)).status).to.equal(403);
      expect((await api.get(t.id)).body.title).to.equal('Untouched');
    });
  });

  describe('DELETE', () => {
    it('deletes the task and its subtasks', async () => {
      const parent = await make({ title: 'Gone' });
      const sub = await make({ title: 'Gone too', parent_task_id: parent.id });
      const res = await api.remove(parent.id);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.id).to.equal(parent.id);
      expect([...res.body.deleted_ids].sort()).to.deep.equal([parent.id, sub.id].sort());
      expect((await api.get(parent.id)).status).to.equal(404);
      expect((await api.get(sub.id)).status).to.equal(404);
      expect((await api.remove(parent.id)).status).to.equal(404);
    });

    it('deletes only the subtask when a subtask is deleted', async () => {
      const parent = await make({ title: 'Stays' });
      const sub = await make({ title: 'Goes', parent_task_id: parent.id });
      expect((await api.remove(sub.id)).body.deleted_ids).to.deep.equal([sub.id]);
      expect((await api.get(parent.id)).body.subtasks).to.deep.equal([]);
    });

    it("answers another company's task with 404 and keeps it; needs crm/task.delete; refuses an unknown scope", async () => {
      const t = await make({ title: 'Kept' });
      expect((await api.remove(t.id, '', b.key.key)).status).to.equal(404);
      const writer = (
        await admin('POST', `/companies/${a.company.id}/keys`, {
          created_by_user_id: a.user.id,
          permissions: ['crm/task.read', 'crm/task.update'],
        })
      ).body;
      expect((await api.remove(t.id, '', writer.key)).status).to.equal(403);
      const scope = await api.remove(t.id, '?scope=everything');
      expect(scope.status).to.equal(400);
      expect(scope.body.message).to.contain('scope');
      expect((await api.get(t.id)).status).to.equal(200);
    });
  });
});
