import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import { LeadDetails } from '../src/leads/lead.detail.js';
import type { LeadStore } from '../src/leads/lead.store.js';

/**
 * Decision 0223: the cache of assembled lead details is bounded by what it holds, not by a count of entries, and lets
 * go of the details nobody reads again. A store that answers every read with the lead it names stands in for
 * Postgres: what is checked is which read each request makes.
 */
describe('lead detail cache: bounded in bytes, idle details dropped', () => {
  const company = uuidv7();
  const user = uuidv7();
  const sent: string[] = [];
  const row = (id: string) => ({ n: 1, id, version: 1, _catalogVersion: '1', viewsCount: 1, _viewsCount: 1, _nowUs: '0' });
  // The store's reads of a detail, each noted by name: the full read (with a view), the check, the read again.
  const store = {
    sales: { pool: Promise.resolve({}) },
    detail: async (_db: unknown, _company: string, ref: string) => {
      sent.push('full');
      return row(ref);
    },
    checkDetail: async (_db: unknown, _company: string, id: string) => {
      sent.push('check');
      return [row(id)];
    },
    detailWithoutView: async (_db: unknown, _company: string, id: string) => {
      sent.push('again');
      return row(id);
    },
  } as unknown as LeadStore;
  /** A detail of about 20 KB of text. */
  const parts = (row: Record<string, unknown>) => ({
    record: { id: row.id as string, detailVersion: 1 },
    head: { id: row.id, title: 'x'.repeat(10_000) },
    stagePeriods: [],
    nowUs: 0,
    associations: {},
  });
  const details = (options: { maxBytes?: number; idleMs?: number }) => new LeadDetails(store, parts as never, options);
  const statementOf = async (d: LeadDetails, id: string) => {
    sent.length = 0;
    expect(await d.read(company, user, id)).to.be.a('string');
    return sent;
  };

  it('reads a cached detail with the check, and holds no more bytes than its budget', async () => {
    const d = details({ maxBytes: 100_000 });
    const ids = Array.from({ length: 10 }, () => uuidv7());
    expect(await statementOf(d, ids[0]!)).to.deep.equal(['full']);
    expect(await statementOf(d, ids[0]!)).to.deep.equal(['check']);
    for (const id of ids.slice(1)) await statementOf(d, id);
    expect(d.held().bytes).to.be.at.most(100_000);
    expect(d.held().entries).to.be.within(1, 4);
    // The least recently read went first.
    expect(await statementOf(d, ids[0]!)).to.deep.equal(['full']);
    expect(await statementOf(d, ids[9]!)).to.deep.equal(['check']);
  });

  it('drops a detail not read for its idle period, even when nothing reads it again', async () => {
    const d = details({ idleMs: 500 });
    const [once, later] = [uuidv7(), uuidv7()];
    await statementOf(d, once);
    expect(d.held().entries).to.equal(1);
    await new Promise((r) => setTimeout(r, 700));
    // Storing another detail purges the idle one.
    await statementOf(d, later);
    expect(d.held().entries).to.equal(1);
    expect(await statementOf(d, later)).to.deep.equal(['check']);
    expect(await statementOf(d, once)).to.deep.equal(['full']);
  });
});
