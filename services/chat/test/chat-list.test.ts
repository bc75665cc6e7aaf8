import { expect } from 'chai';
import { phoneVariants, planList } from '../src/chats/chat.list.js';

describe('chat list planning', () => {
  it('reads phone-shaped terms with and without the Brazilian ninth digit, with and without 55', () => {
    expect(phoneVariants('+55 (11) 98765-4321')).to.have.members(['5511987654321', '1187654321', '11987654321']);
    expect(phoneVariants('11 8765-4321')).to.have.members(['1187654321', '11987654321']);
    expect(phoneVariants('5511 8765-4321')).to.have.members(['551187654321', '11987654321', '1187654321']);
  });

  it('does not read names or short numbers as phones', () => {
    expect(phoneVariants('Maria 1234')).to.deep.equal([]);
    expect(phoneVariants('1234-567')).to.deep.equal([]);
  });

  it('keeps Instagram out of every positive WhatsApp-only filter, and directs channel_account_id alone to Instagram', () => {
    const company = '0190a0a0-0000-7000-8000-000000000001';
    for (const q of [
      { responsible_user_id: company },
      { has_scheduled_messages: true },
      { has_pending_copilot_actions: true },
      { customer_reply_status: 'initial_replied' as const },
    ]) {
      expect(planList(company, q, null).where, JSON.stringify(q)).to.contain(`c.channel_type = 'WHATSAPP'`);
    }
    expect(planList(company, { has_scheduled_messages: false }, null).where).not.to.contain(`'WHATSAPP'`);
    expect(planList(company, { channel_account_id: company }, null).where).to.contain(`c.channel_type = 'INSTAGRAM'`);
    expect(planList(company, { channel_account_id: company, channel_type: 'WHATSAPP' }, null).where).not.to.contain(`'INSTAGRAM'`);
  });

  it('binds every value (the company first) and escapes LIKE wildcards of a search', () => {
    const plan = planList('c', { search: '50%_off', priority: 2 }, ['p1']);
    expect(plan.values[0]).to.equal('c');
    expect(plan.values).to.include('%50\\%\\_off%');
    expect(plan.values).to.deep.include(['p1']);
    expect(plan.where).not.to.contain('50%');
  });
});
