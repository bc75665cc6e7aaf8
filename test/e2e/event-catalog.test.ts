import { createHmac } from 'node:crypto';
import { SPEC_EVENT_KEYS as EVENT_KEYS, type EventKey } from '@svc/platform/events/catalog';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { chatsApi, openChatStack } from '../support/chats.js';
import { type ReceivedRequest, startReceiver } from '../support/receiver.js';

/**
 * The whole catalog at once: one company subscribed to all 33 keys at a loopback receiver, each event caused the
 * way an integrator or operator would (external routes, the admin API's dedicated actions, the chat inbound route
 * and a send to the fake Graph server, the public satisfaction form), and every key seen arriving signed, in the
 * spec's envelope, about the record that was acted on.
 */
describe('the event catalog: all 33 keys fire for one subscription, signed, about the record acted on', function () {
  this.timeout(180_000);
  let s: Awaited<ReturnType<typeof openChatStack>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let secret: string;
  /** For each key, the id of the record the test caused it about. */
  const expected = new Map<EventKey, string>();

  /** The id of the main object of a payload: the snapshot itself for `*.updated` and chat messages, else `<kind>`. */
  const subjectIdOf = (key: EventKey, payload: any): string | undefined => {
    const kind = key.split('.')[0]!;
    if (key.endsWith('.updated') && kind !== 'contract') return payload?.id;
    if (kind === 'chat') return payload?.id;
    if (kind === 'satisfaction') return payload?.link?.id;
    return payload?.[kind]?.id;
  };
  const arrivedFor = (key: EventKey): ReceivedRequest | undefined =>
    receiver.received.find((r) => r.body?.event_key === key && subjectIdOf(key, r.body.payload) === expected.get(key));

  before(async () => {
    s = await openChatStack();
    const t = s.tenant;
    receiver = await startReceiver();
    const sub = await t.admin('POST', `/companies/${t.company.id}/webhooks`, { url: receiver.url(`/${t.company.id}`), events: EVENT_KEYS });
    expect(sub.status, sub.text).to.equal(201);
    expect(sub.body.events).to.have.members([...EVENT_KEYS]);
    secret = sub.body.secret;

    const ok = async (method: string, rest: string, body?: unknown, status = 200) => {
      const res = await t.admin(method, `/companies/${t.company.id}/${rest}`, body);
      expect(res.status, `${method} ${rest}: ${res.text}`).to.equal(status);
      return res.body;
    };
    const external = async (method: string, path: string, body: unknown, status = 201) => {
      const res = await s.call(method, `/integrations/external${path}`, { token: t.key.key, body });
      expect(res.status, `${method} ${path}: ${res.text}`).to.equal(status);
      return res.body;
    };
    const tag = await ok('POST', 'tags', { name: 'Hot' }, 201);
    const lossReason = await ok('POST', 'loss-reasons', { name: 'Price' }, 201);
    const gainReason = await ok('POST', 'gain-reasons', { name: 'Budget' }, 201);
    const fields = {
      lead: await ok('POST', 'custom-fields', { entity: 'lead', name: 'Size', type: 'number' }, 201),
      deal: await ok('POST', 'custom-fields', { entity: 'deal', name: 'Size', type: 'number' }, 201),
    };
    const stages = t.pipeline.stages as { id: string }[];

    // Leads and deals: created, updated through the external API, then every dedicated action; a second record is lost.
    for (const kind of ['lead', 'deal'] as const) {
      const record = await external('POST', `/${kind}s`, { title: `Catalog ${kind}` });
      const loser = await external('POST', `/${kind}s`, { title: `Lost ${kind}` });
      const act = (method: string, rest: string, body?: unknown) => ok(method, `${kind}s/${rest}`, body);
      await external('PUT', `/${kind}s/${record.id}`, { title: `Catalog ${kind}, renamed` }, 200);
      await act('POST', `${record.id}/move`, { user_id: t.user.id, stage_id: stages[1]!.id });
      await act('POST', `${record.id}/tags`, { user_id: t.user.id, tag_ids: [tag.id] });
      await act('DELETE', `${record.id}/tags/${tag.id}?user_id=${t.user.id}`);
      await act('PUT', `${record.id}/custom-fields/${fields[kind].id}`, { user_id: t.user.id, value: 42 });
      await act('DELETE', `${record.id}/custom-fields/${fields[kind].id}?user_id=${t.user.id}`);
      await act('PUT', `${record.id}/quality`, { user_id: t.user.id, quality_rating: 4, quality_reason: 'Warm' });
      await act(
        'POST',
        `${record.id}/win`,
        kind === 'lead' ? { user_id: t.user.id } : { user_id: t.user.id, gain_reason_ids: [gainReason.id] },
      );
      await act('POST', `${loser.id}/lose`, { user_id: t.user.id, loss_reason_ids: [lossReason.id] });
      for (const key of EVENT_KEYS.filter((k) => k.startsWith(`${kind}.`))) expected.set(key, key.endsWith('.lost') ? loser.id : record.id);
    }

    // Chats: a message from the contact through the admin inbound route (opening the window), then a send to it.
    const chat = await t.chat({ channel_type: 'WHATSAPP', whatsapp_number_id: t.number.id, wa_contact_id: '5511987654321' });
    const inbound = await ok('POST', `chats/${chat.id}/inbound`, { type: 'text', body_text: 'Oi!', wamid: 'wamid.CATALOG1' }, 201);
    expected.set('chat.message_received', inbound.id);
    const sent = await chatsApi(s.call, () => t.key.key).send(chat.id, { body: 'Olá!' });
    expect(sent.status, sent.text).to.equal(201);
    expected.set('chat.message_sent', sent.body.records[0].id);

    // Tasks: one created straight into a completion stage.
    const type = await ok('POST', 'task-types', { name: 'Call' }, 201);
    const done = await ok('POST', 'task-stages', { name: 'Done', is_completion: true }, 201);
    const task = await external('POST', '/tasks', { crm_task_type_id: type.id, title: 'Catalog task', crm_task_stage_id: done.id });
    expected.set('task.completed', task.id);

    // Deliveries: created, changed, moved, completed.
    const deliveryPipeline = await ok(
      'POST',
      'delivery-pipelines',
      { name: 'Implementation', stages: [{ name: 'Kick-off' }, { name: 'Build' }] },
      201,
    );
    const delivery = await ok('POST', 'deliveries', { user_id: t.user.id, title: 'Onboarding' }, 201);
    await ok('PATCH', `deliveries/${delivery.id}`, { user_id: t.user.id, title: 'Onboarding, renamed' });
    await ok('POST', `deliveries/${delivery.id}/move`, { user_id: t.user.id, stage_id: deliveryPipeline.stages[1].id });
    await ok('POST', `deliveries/${delivery.id}/complete`, { user_id: t.user.id });
    for (const verb of ['created', 'updated', 'stage_changed', 'completed'] as const) expected.set(`delivery.${verb}`, delivery.id);

    // Contracts: created, changed, renewed, completed; a second one canceled.
    const contractBody = { user_id: t.user.id, title: 'Yearly plan', start_date: '2027-01-01', end_date: '2027-12-31', value: 1200 };
    const contract = await ok('POST', 'contracts', contractBody, 201);
    const canceled = await ok('POST', 'contracts', { ...contractBody, title: 'Short plan' }, 201);
    await ok('PATCH', `contracts/${contract.id}`, { user_id: t.user.id, title: 'Two-year plan' });
    await ok('POST', `contracts/${contract.id}/renew`, { user_id: t.user.id, end_date: '2028-12-31' });
    await ok('POST', `contracts/${contract.id}/complete`, { user_id: t.user.id });
    await ok('POST', `contracts/${canceled.id}/cancel`, { user_id: t.user.id, reason: 'Budget cut' });
    for (const verb of ['created', 'updated', 'renewed', 'completed'] as const) expected.set(`contract.${verb}`, contract.id);
    expected.set('contract.canceled', canceled.id);

    // Satisfaction: a link about the first lead, answered on the public form without a key.
    const link = await external('POST', '/satisfaction/links', { crm_lead_id: expected.get('lead.created') });
    const answer = await s.call('POST', `/public/satisfaction/${link.token}`, { body: { score: 5 } });
    expect(answer.status, answer.text).to.equal(201);
    expected.set('satisfaction.public_submission_created', link.id);

    expect([...expected.keys()]).to.have.members([...EVENT_KEYS]);
  });
  after(async () => {
    await receiver?.close();
    await s?.stop();
  });

  it('delivers all 33 keys of the catalog', async () => {
    const missing = () => EVENT_KEYS.filter((key) => !arrivedFor(key));
    await eventually(() => (missing().length === 0 ? true : undefined), 30_000).catch(() => undefined);
    expect(missing()).to.deep.equal([]);
  });

  for (const key of EVENT_KEYS)
    it(`${key}: the envelope, the spec headers, a valid signature and a payload about the record acted on`, async () => {
      const got = await eventually(() => arrivedFor(key), 30_000);
      expect(got.body).to.have.all.keys('event_id', 'event_key', 'payload');
      expect(got.body.event_id).to.be.a('string').and.not.empty;
      expect(got.body.payload).to.be.an('object');
      expect(Object.keys(got.body.payload)).not.to.be.empty;
      expect(got.headers['x-svc-event']).to.equal(key);
      expect(got.headers['x-svc-event-id']).to.equal(got.body.event_id);
      expect(got.headers['x-svc-signature']).to.equal(`sha256=${createHmac('sha256', secret).update(got.raw).digest('hex')}`);
    });
});
