import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';
import { seedTaskTenant, TASK_FIELDS, type TaskTenant, tasksApi } from '../support/tasks.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const ACTOR_FIELDS = [
  'meeting_can_manage_participants',
  'meeting_can_respond',
  'meeting_self_attendee_email',
  'meeting_self_response_status',
  'meeting_response',
];

describe('task.completed: through the outbox, JetStream and the webhooks service to a real receiver', () => {
  let stack: Stack;
  let admin: ReturnType<typeof adminOf>;
  let receiver: WebhookReceiver;
  let a: TaskTenant;
  let api: ReturnType<typeof tasksApi>;
  let route: string;
  const received = () => receiver.on(route);
  const completedIds = () => received().map((r) => r.body.payload.task.id as string);
  const make = async (body: Record<string, unknown>) => {
    const res = await api.create({ crm_task_type_id: a.types.call.id, title: 'Event task', ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };

  before(async () => {
    stack = await startStack();
    const call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    receiver = await WebhookReceiver.start();
    a = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
    api = tasksApi(call, () => a.key.key);
    route = `tasks-${a.company.id}`;
    const sub = await admin('POST', `/companies/${a.company.id}/webhooks`, {
      url: receiver.route(route, () => 200),
      events: ['task.completed'],
      secret: 'task-completed-secret',
    });
    expect(sub.status, sub.text).to.equal(201);
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('fires for a task created in a completion stage, with {task, completed_by, completed_at}', async () => {
    const t = await make({
      title: 'Born done',
      crm_task_stage_id: a.stages.done.id,
      start_date: '2026-12-01T09:00:00Z',
      tags: [a.tags.red.id],
    });
    const [got] = await eventually(() => (received().length >= 1 ? received() : undefined), 20_000);
    expect(got!.headers['x-svc-event']).to.equal('task.completed');
    const body = got!.body;
    expect(body).to.have.all.keys('event_id', 'event_key', 'payload');
    expect(body.event_key).to.equal('task.completed');
    expect(body.payload).to.have.all.keys('task', 'completed_by', 'completed_at');
    expect(body.payload.completed_by).to.deep.equal({ id: a.user.id, name: 'Integrator', avatar: null });
    expect(body.payload.completed_at).to.equal(t.completed_at);
    // The task as GET shows it, less what depends on who is looking.
    const { subtasks: _subtasks, ...shown } = (await api.get(t.id)).body;
    for (const f of ACTOR_FIELDS) delete shown[f];
    expect(body.payload.task).to.deep.equal(shown);
    expect(Object.keys(body.payload.task).sort()).to.deep.equal(
      TASK_FIELDS.filter((f) => f !== 'subtasks' && !ACTOR_FIELDS.includes(f)).sort(),
    );
  });

  it('fires when completed by stage and by `completed: true`, again after a reopening, never for other changes', async () => {
    const byStage = await make({ title: 'By stage' });
    const byFlag = await make({ title: 'By flag' });
    const notDone = await make({ title: 'Never completed' });
    const count = received().length;
    const move = await api.update(byStage.id, { crm_task_stage_id: a.stages.done.id }, a.other.key.key);
    expect(move.status, move.text).to.equal(200);
    expect((await api.update(byFlag.id, { completed: true })).status).to.equal(200);
    expect((await api.update(byStage.id, { title: 'By stage, renamed while done' })).status).to.equal(200);
    expect((await api.update(notDone.id, { crm_task_stage_id: a.stages.doing.id })).status).to.equal(200);
    expect((await api.update(byFlag.id, { completed: false })).status).to.equal(200);
    expect((await api.update(byFlag.id, { completed: true })).status).to.equal(200);
    // Deliveries are not ordered: wait for the three expected events themselves (a late event of an earlier test can
    // make up a count), then a task completed after all of the above gives any wrong extra event time to arrive.
    await eventually(() => {
      const since = completedIds().slice(count);
      return since.filter((id) => id === byStage.id).length >= 1 && since.filter((id) => id === byFlag.id).length >= 2;
    }, 20_000);
    const marker = await make({ title: 'Marker', crm_task_stage_id: a.stages.done.id });
    await eventually(() => completedIds().includes(marker.id), 20_000);
    const ids = completedIds().slice(count);
    expect(ids.filter((id) => id === byStage.id)).to.have.length(1);
    expect(ids.filter((id) => id === byFlag.id)).to.have.length(2);
    expect(ids).to.not.include(notDone.id);
    const stageEvent = received().find((r) => r.body.payload.task.id === byStage.id)!;
    expect(stageEvent.body.payload.completed_by).to.deep.equal({ id: a.other.user.id, name: 'Other', avatar: null });
    expect(stageEvent.body.payload.task.crm_task_stage).to.include({ id: a.stages.done.id, is_completion: true });
    expect(new Set(received().map((r) => r.body.event_id)).size, 'distinct event ids').to.equal(received().length);
  });

  it('an update that completes a task says what it changed (changes, decision 0178); a creation carries none', async () => {
    const t = await make({ title: 'To finish' });
    const done = await api.update(t.id, { completed: true, title: 'Finished' });
    expect(done.status, done.text).to.equal(200);
    const got = await eventually(() => received().find((r) => r.body.payload.task.id === t.id));
    const { changes } = got.body.payload;
    expect(changes.title).to.deep.equal({ from: 'To finish', to: 'Finished' });
    expect(changes.completed_at).to.deep.equal({ from: null, to: done.body.completed_at });
    expect(changes.completed_by.to).to.deep.equal({ id: a.user.id, name: 'Integrator', avatar: null });
    expect(changes).not.to.have.any.keys('updated_at', 'description', 'created_at');
    const born = await make({ title: 'Born done 2', crm_task_stage_id: a.stages.done.id });
    const created = await eventually(() => received().find((r) => r.body.payload.task.id === born.id));
    expect(created.body.payload).not.to.have.property('changes');
  });

  it('fires once when two completions of one task race', async () => {
    const t = await make({ title: 'Raced' });
    const results = await Promise.all([
      api.update(t.id, { completed: true }),
      api.update(t.id, { crm_task_stage_id: a.stages.done.id }, a.other.key.key),
    ]);
    expect(results.map((r) => r.status)).to.deep.equal([200, 200]);
    const marker = await make({ title: 'Marker 2', crm_task_stage_id: a.stages.done.id });
    await eventually(() => completedIds().includes(marker.id), 20_000);
    await eventually(() => completedIds().includes(t.id), 20_000);
    expect(completedIds().filter((id) => id === t.id)).to.have.length(1);
  });

  it('is not issued while the company`s plan has expired', async () => {
    // The tasks service caches the company for 2 s: ask its outbox writer's gate until it sees the change.
    const planSeen = (open: boolean) =>
      eventually(async () => {
        const gate = stack.services.tasks!.ctx.outbox.gate;
        return gate.kind === 'ask' && (await gate.open(a.company.id, new Date())) === open;
      }, 5000);
    await admin('PATCH', `/companies/${a.company.id}`, { plan_valid_until: '2020-01-01T00:00:00Z' });
    await planSeen(false);
    const lapsed = await make({ title: 'During the lapse', crm_task_stage_id: a.stages.done.id });
    await admin('PATCH', `/companies/${a.company.id}`, { plan_valid_until: null });
    await planSeen(true);
    const renewed = await make({ title: 'After renewal', crm_task_stage_id: a.stages.done.id });
    await eventually(() => completedIds().includes(renewed.id), 20_000);
    expect(completedIds()).to.not.include(lapsed.id);
  });
});
