import { randomInt } from 'node:crypto';
import type { Logger } from '@svc/platform/logging';
import type { ServiceContext } from '@svc/platform/service';
import pg from 'pg';

/** Process liveness (decision 0111): a session advisory lock Postgres drops when the process dies, so its keys read as failed. */
export const ATTEMPT_LOCK_CLASS = 0x6372_6d6b; // 'crmk'

const RECONNECT_MS = 1000;

export class AttemptOwner {
  readonly id: number;
  private client: pg.Client | undefined;
  private stopped = false;
  private acquired: Promise<void>;
  private readonly logger: Logger;

  constructor(
    private readonly databaseUrl: string,
    logger: Logger,
  ) {
    this.logger = logger;
    this.id = randomInt(1, 2 ** 31 - 1);
    this.acquired = this.connect();
  }

  ready(): Promise<void> {
    return this.acquired;
  }

  private async connect(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'crm attempt owner' });
      try {
        await client.connect();
        const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1, $2) as locked', [
          ATTEMPT_LOCK_CLASS,
          this.id,
        ]);
        // Another live process drew the same id: its attempts are not ours to vouch for.
        if (!rows[0]?.locked) throw new Error(`attempt lock ${this.id} is held by another process`);
        client.on('error', (err) => {
          this.logger.warn({ err: err.message }, 'attempt owner connection lost; reconnecting');
          this.reconnect(client);
        });
        client.on('end', () => this.reconnect(client));
        this.client = client;
        return;
      } catch (err) {
        await client.end().catch(() => undefined);
        this.logger.warn({ err: (err as Error).message }, 'attempt owner lock not taken; retrying');
        await new Promise((r) => setTimeout(r, RECONNECT_MS));
      }
    }
  }

  private reconnect(lost: pg.Client): void {
    if (this.stopped || this.client !== lost) return;
    this.client = undefined;
    this.acquired = this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}

const owners = new WeakMap<ServiceContext, AttemptOwner>();

/** One per service context, shared by leads and deals. */
export function attemptOwnerOf(ctx: ServiceContext): AttemptOwner {
  let owner = owners.get(ctx);
  if (!owner) {
    owner = new AttemptOwner(ctx.config.DATABASE_URL, ctx.logger);
    owners.set(ctx, owner);
  }
  return owner;
}
