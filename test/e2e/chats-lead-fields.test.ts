import { expect } from 'chai';
import { archivedChat, type ChatTenant, seedChatTenant, seedPersonChats } from '../support/chats.js';
import { openStack } from '../support/session.js';

describe('the chat fields of the lead detail, asked of chat over gRPC and gated by crm/chats.read', function () {
  this.timeout(120_000);
  let s: Awaited<ReturnType<typeof openStack>>;
  let t: ChatTenant;
  let lead: any;
  let wa: any;
  let ig: any;

  before(async () => {
    s = await openStack();
    t = await seedChatTenant(s.call, s.stack.adminToken);
    const res = await s.call('POST', '/integrations/external/leads', {
      token: t.key.key,
      body: { title: 'Lead with chats', persons_id: [t.person.id] },
    });
    expect(res.status, res.text).to.equal(201);
    lead = res.body;
    ({ wa, ig } = await seedPersonChats(t));
    await archivedChat(t);
  });
  after(async () => {
    await s?.db.end();
    await s?.stack.stop();
  });

  const detail = async (key: string) => {
    const res = await s.call('GET', `/integrations/external/leads/${lead.id}`, { token: key });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it("lists the person's chats of both channels (archived left out) with the spec's summary, and the whatsapp_* alias", async () => {
    const d = await detail(t.key.key);
    expect(d.has_channel_chat).to.equal(true);
    expect(d.has_whatsapp_chat).to.equal(true);
    expect(d.channel_chats.map((c: any) => c.chat_id)).to.deep.equal([wa.id, ig.id]);
    expect(d.channel_chats[0]).to.deep.equal({
      chat_id: wa.id,
      title: 'Maria Zap',
      person_id: t.person.id,
      person_name: 'Maria Cliente',
      channel_account_id: t.number.id,
      type: 'INDIVIDUAL',
      channel_type: 'WHATSAPP',
      unread_count: 2,
      channel_account_name: 'Acme Support',
      whatsapp_number_verified_name: 'Acme Support',
      external_contact_id: '5511987654321',
      external_contact_handle: '+5511987654321',
      chat_responsible: { id: t.otherUser.id, name: 'Second Agent', avatar: null },
    });
    expect(d.channel_chats[1]).to.include({
      channel_type: 'INSTAGRAM',
      title: 'Maria IG',
      external_contact_id: 'igsid-9',
      external_contact_handle: 'maria.ig',
      chat_responsible: null,
    });
    expect(d.whatsapp_chats).to.deep.equal(d.channel_chats);
  });

  it('shows false flags and empty lists to a key without crm/chats.read, and for a lead without persons', async () => {
    const key = await t.admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/lead.read'] });
    const d = await detail(key.body.key);
    expect(d).to.include({ has_channel_chat: false, has_whatsapp_chat: false });
    expect(d.channel_chats).to.deep.equal([]);
    expect(d.whatsapp_chats).to.deep.equal([]);
    const bare = await s.call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'No person' } });
    const b = (await s.call('GET', `/integrations/external/leads/${bare.body.id}`, { token: t.key.key })).body;
    expect(b).to.include({ has_channel_chat: false, has_whatsapp_chat: false });
  });

  it('follows the chats as they change, while the rest of the detail stays cached', async () => {
    await s.db.query('update chat.chats set archived_at = now() where id = $1', [ig.id]);
    const d = await detail(t.key.key);
    expect(d.channel_chats.map((c: any) => c.chat_id)).to.deep.equal([wa.id]);
  });
});
