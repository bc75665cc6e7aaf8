import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import type { LeadStore } from './lead.store.js';

const BATCH = 5000;

/**
 * Folds the views GET lead queues into leads.views_count (decision 0012): every `intervalMs`, and at once again
 * while full batches come back. A failed fold (a deadlock with another replica's, the database away) leaves the
 * rows queued for the next one; readers count queued views anyway, so nothing is lost or counted twice.
 */
export class LeadViewFolder {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly pool: Promise<Pool>,
    private readonly store: Pick<LeadStore, 'foldViews'>,
    private readonly logger: Logger,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Folds until the queue is empty (tests, shutdown). */
  async foldAll(): Promise<void> {
    while ((await this.foldOnce()) === BATCH);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.foldAll()
        .catch((err: unknown) => this.logger.warn({ err }, 'folding lead views failed; they stay queued'))
        .finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  private async foldOnce(): Promise<number> {
    return this.store.foldViews(await this.pool, BATCH);
  }
}
