import { KeyedBatcher } from './sales.batcher.js';
import type { SalesRecord } from './sales.entity.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Db, NewRecord, SalesStore } from './sales.store.js';

type Outcome = { code: number } | { error: unknown };

/**
 * Inserts of new records (decision 0225). Creations of one company that run outside a transaction wait for each other
 * in crm and go to Postgres together, in one statement: they hold the company's sequence row for one statement and
 * one commit, instead of each Postgres backend waiting on that row for the commit of the one before it.
 */
export class RecordInserts<R extends SalesRecord, Rel extends SalesRelations> {
  private readonly batches: KeyedBatcher<NewRecord<R>, Outcome>;

  constructor(private readonly store: SalesStore<R, Rel>) {
    this.batches = new KeyedBatcher((companyId, items) => this.together(companyId, items), 64);
  }

  /** The record's code. With `tx`, alone in the caller's transaction; without, with the company's others waiting. */
  async insert(tx: Db | null, companyId: string, item: NewRecord<R>): Promise<number> {
    if (tx) return (await this.store.insertRecords(tx, companyId, [item]))[0] as number;
    const out = (await this.batches.add(companyId, item)) as Outcome;
    if ('error' in out) throw out.error;
    return out.code;
  }

  private async together(companyId: string, items: NewRecord<R>[]): Promise<Outcome[]> {
    const pool = await this.store.pool;
    try {
      return (await this.store.insertRecords(pool, companyId, items)).map((code) => ({ code }));
    } catch (error) {
      if (items.length === 1) return [{ error }];
      // The statement failed as a whole and took no code: one record's error (an external id already taken) is its
      // own, so each is inserted alone and answers for itself.
      const out: Outcome[] = [];
      for (const item of items) {
        try {
          out.push({ code: (await this.store.insertRecords(pool, companyId, [item]))[0] as number });
        } catch (err) {
          out.push({ error: err });
        }
      }
      return out;
    }
  }
}
