import { type Stored, tableOf } from '@svc/platform/db/entity-table';
import type { Pool } from 'pg';
import { ChatIdempotencyKey } from './idempotency.entity.js';

const RESERVED = tableOf(ChatIdempotencyKey).columnList(['companyId', 'key', 'operation', 'status', 'createdAt']);

/** A key as its replay reads it; `abandoned`: still processing long after any request would have ended. */
export type KeyRow = Pick<Stored<ChatIdempotencyKey>, 'operation' | 'answerStatus' | 'answer'> & {
  status: 'processing' | 'done' | 'unknown';
  abandoned: boolean;
};

/** The gateway gives up well before this: an older attempt is dead. */
const ATTEMPT_MAX_SECONDS = 120;

export class IdempotencyStore {
  constructor(private readonly pool: () => Promise<Pool>) {}

  /** True when this call reserved the key (one concurrent caller wins). */
  async reserve(companyId: string, key: string, operation: string): Promise<boolean> {
    const { rowCount } = await (await this.pool()).query({
      name: 'chat_idem_reserve',
      text: `insert into idempotency_keys (${RESERVED}) values ($1, $2, $3, 'processing', now())
        on conflict do nothing`,
      values: [companyId, key, operation],
    });
    return rowCount === 1;
  }

  async find(companyId: string, key: string): Promise<KeyRow | undefined> {
    const { rows } = await (await this.pool()).query<KeyRow>({
      name: 'chat_idem_find',
      text: `select operation, status, answer_status as "answerStatus", answer,
          status = 'processing' and created_at < now() - interval '${ATTEMPT_MAX_SECONDS} seconds' as abandoned
        from idempotency_keys where company_id = $1 and key = $2`,
      values: [companyId, key],
    });
    return rows[0];
  }

  async finish(companyId: string, key: string, status: 'done' | 'unknown', answerStatus: number | null, answer: unknown): Promise<void> {
    await (await this.pool()).query({
      name: 'chat_idem_finish',
      text: `update idempotency_keys set status = $3, answer_status = $4, answer = $5, finished_at = now()
        where company_id = $1 and key = $2 and status = 'processing'`,
      values: [companyId, key, status, answerStatus, answer === undefined ? null : JSON.stringify(answer)],
    });
  }

  /** Frees a key whose request failed before anything left the service, so the same key may be sent again. */
  async release(companyId: string, key: string): Promise<void> {
    await (await this.pool()).query({
      name: 'chat_idem_release',
      text: `delete from idempotency_keys where company_id = $1 and key = $2 and status = 'processing'`,
      values: [companyId, key],
    });
  }
}
