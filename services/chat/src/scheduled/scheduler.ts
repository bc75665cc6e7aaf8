import { AppError } from '@svc/platform/errors';
import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import type { SendMessageBody } from '../outbound/outbound.schema.js';
import type { IncomingFile, MessageSender } from '../outbound/outbound.sender.js';
import { type Attachment, attachmentIds, type ScheduledFileStore } from './scheduled.files.js';
import { claimDue, closeStale, liveFileIds, type Settled, type StoredScheduled, settleClaimed } from './scheduled.store.js';

export interface SchedulerOptions {
  intervalMs: number;
  /** A row left PROCESSING this long (its replica died mid-send) is closed as FAILED, never sent again. */
  staleMs: number;
  batch: number;
  logger: Logger;
  /** Where the files of scheduled messages wait (decision 0067); removed once the row is settled. */
  files: ScheduledFileStore;
  /** How often the files no PENDING or PROCESSING row names are swept, and how old they must be (an upload's time). */
  sweepMs: number;
  graceMs: number;
}

/** Exactly once across replicas (decision 0063): a crash after the claim leaves PROCESSING, which the sweep fails rather than resend. */
export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private sweptAt = 0;

  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly sender: MessageSender,
    private readonly o: SchedulerOptions,
  ) {}

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .then(() => undefined)
        .catch((err) => this.o.logger.error({ err }, 'scheduler tick failed'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.timer = setTimeout(loop, this.o.intervalMs);
        });
    };
    this.timer = setTimeout(loop, this.o.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  async tick(now = new Date()): Promise<number> {
    const pool = await this.pool();
    await this.o.files.remove(await closeStale(pool, new Date(now.getTime() - this.o.staleMs)));
    const rows = await claimDue(pool, now, this.o.batch);
    for (const row of rows) await this.sendOne(pool, row);
    if (now.getTime() - this.sweptAt >= this.o.sweepMs) await this.sweep(pool, now);
    return rows.length;
  }

  /** Older than an upload can take, so an upload in progress is never swept. */
  private async sweep(pool: Pool, now: Date): Promise<void> {
    this.sweptAt = now.getTime();
    await this.o.files.sweep(await liveFileIds(pool), new Date(now.getTime() - this.o.graceMs));
  }

  private async sendOne(pool: Pool, row: StoredScheduled): Promise<void> {
    const p = row.payload as {
      type: 'text' | 'template';
      body: string | null;
      template: { name: string; language: string } | null;
      template_fields: SendMessageBody['template_fields'];
      reference_wamid: string | null;
    };
    const actor = { companyId: row.companyId, userId: row.createdByUserId ?? '', permissions: () => true };
    const body: SendMessageBody = {
      type: p.type,
      body: p.body ?? undefined,
      template: p.template ?? undefined,
      template_fields: p.template_fields,
      reference_wamid: p.reference_wamid ?? undefined,
    };
    let outcome: Settled;
    try {
      const chat = await this.sender.prepare(actor, row.chatId, body);
      const { records } = await this.sender.send(actor, chat, body, this.filesOf(row));
      const failed = records.find((r) => r.status === 'failed');
      outcome = failed
        ? {
            status: 'FAILED',
            ids: records.map((r) => r.id),
            reason: failed.error_message ?? 'the provider refused the message',
            cancel: null,
          }
        : { status: 'SENT', ids: records.map((r) => r.id), reason: null, cancel: null };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // A template that is no longer approved on the number cancels the send (the spec's TEMPLATE_INVALID_OR_UNAVAILABLE).
      if (err instanceof AppError && err.kind === 'invalid' && message.startsWith('template:')) {
        outcome = { status: 'CANCELED', ids: [], reason: null, cancel: message };
      } else outcome = { status: 'FAILED', ids: [], reason: message, cancel: null };
    }
    await settleClaimed(pool, row.id, outcome);
    await this.o.files.remove(attachmentIds(row));
  }

  /** The row's files, each opened from the store only when the sender reaches it. */
  private async *filesOf(row: StoredScheduled): AsyncIterable<IncomingFile> {
    for (const a of row.attachments as Attachment[]) {
      yield { stream: this.o.files.open(a.id), fileName: a.file_name, mimeType: a.mime_type };
    }
  }
}
