import { conflict } from '@svc/platform/errors';
import type { Pool } from 'pg';
import { IdempotencyStore } from './idempotency.store.js';

export interface Answer {
  status: number;
  body: unknown;
}

/** Decision 0188: a failure after `reached()` leaves the key `unknown` (409) so the client looks before resending. */
export class IdempotentWrites {
  private readonly store: IdempotencyStore;

  constructor(pool: () => Promise<Pool>) {
    this.store = new IdempotencyStore(pool);
  }

  async once(
    companyId: string,
    key: string | undefined,
    operation: string,
    work: (reached: () => void) => Promise<Answer>,
  ): Promise<Answer & { replayed: boolean }> {
    if (key === undefined) return { ...(await work(() => undefined)), replayed: false };
    if (!(await this.store.reserve(companyId, key, operation)))
      return { ...(await this.replay(companyId, key, operation)), replayed: true };
    let past = false;
    let answer: Answer;
    try {
      answer = await work(() => {
        past = true;
      });
    } catch (err) {
      if (past) await this.store.finish(companyId, key, 'unknown', null, null);
      else await this.store.release(companyId, key);
      throw err;
    }
    await this.store.finish(companyId, key, 'done', answer.status, answer.body);
    return { ...answer, replayed: false };
  }

  private async replay(companyId: string, key: string, operation: string): Promise<Answer> {
    const row = await this.store.find(companyId, key);
    if (!row) throw conflict('idempotency key: a request with this key is still processing');
    if (row.operation !== operation) throw conflict(`idempotency key: already used for ${row.operation}; use a new one`);
    if (row.status === 'done' && row.answerStatus !== null) return { status: row.answerStatus, body: row.answer };
    if (row.status === 'unknown' || row.abandoned) {
      throw conflict(
        'idempotency key: a request with this key failed after the provider may have received the message; ' +
          'it is not sent again: check the chat’s messages, then use a new key',
      );
    }
    throw conflict('idempotency key: a request with this key is still processing');
  }
}
