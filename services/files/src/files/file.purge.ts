import { inTransaction } from '@svc/platform/db/native';
import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import type { FileStorage } from '../storage/storage.js';
import { claimPurgeBatch, markFilesPurged } from './file.store.js';

export interface PurgeOptions {
  /** Days the bytes of a removed file are kept after its removal. */
  retentionDays: number;
  /** Per replica; 0: never (the bytes are kept for good). */
  intervalMs: number;
  batch: number;
  logger: Logger;
}

const DELETES_IN_FLIGHT = 8;

/**
 * Batches are claimed with `for update skip locked` while their bytes are deleted, so replicas share the queue; a
 * replica that dies mid-batch rolls back and a later pass deletes again (absent bytes are no error). A failed deletion
 * ends the pass and stays queued (decision 0136).
 */
export class FilePurger {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly storage: FileStorage,
    private readonly o: PurgeOptions,
  ) {}

  start(): void {
    if (this.o.intervalMs === 0) return;
    const loop = () => {
      if (this.stopped) return;
      this.running = this.purge()
        .then((purged) => {
          if (purged > 0) this.o.logger.info({ purged }, 'purged the bytes of removed files');
        })
        .catch((err) => this.o.logger.error({ err }, 'file purge failed'))
        .finally(() => {
          if (this.stopped) return;
          this.timer = setTimeout(loop, this.o.intervalMs);
          this.timer.unref();
        });
    };
    // Soon after start, so a process restarted often still purges.
    this.timer = setTimeout(loop, Math.min(this.o.intervalMs, 5000));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Until the queue is empty or the process stops; returns the count. */
  async purge(): Promise<number> {
    let purged = 0;
    for (;;) {
      const n = await this.purgeBatch();
      purged += n;
      if (n < this.o.batch || this.stopped) return purged;
    }
  }

  async purgeBatch(): Promise<number> {
    let failure: unknown;
    const purged = await inTransaction(await this.pool(), async (client) => {
      const rows = await claimPurgeBatch(client, this.o.retentionDays, this.o.batch);
      const done: string[] = [];
      for (let i = 0; i < rows.length && failure === undefined; i += DELETES_IN_FLIGHT) {
        const slice = rows.slice(i, i + DELETES_IN_FLIGHT);
        const results = await Promise.allSettled(slice.map((r) => this.storage.delete(r.storageKey)));
        results.forEach((result, j) => {
          if (result.status === 'fulfilled') done.push(slice[j]!.id);
          else failure ??= result.reason;
        });
      }
      if (done.length > 0) await markFilesPurged(client, done);
      return done.length;
    });
    if (failure !== undefined) throw failure;
    return purged;
  }
}
