import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import type { LeadStore } from './lead.store.js';

const BATCH = 5000;

/** Folds queued views into views_count (decision 0012); a failed fold leaves rows queued and readers count them anyway. */
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

  /** Tests and shutdown. */
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
