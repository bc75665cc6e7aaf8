import { isUuid } from '@svc/platform/errors';
import { LRUCache } from 'lru-cache';
import { v7 as uuidv7 } from 'uuid';
import { KeyedBatcher } from '../sales/sales.batcher.js';
import type { DetailParts } from '../sales/sales.details.js';
import { type SalesDetailExtras, stageDurationsAt, withoutChatFields } from '../sales/sales.snapshot.js';
import type { Lead } from './lead.entity.js';
import type { DetailCheckRow, LeadStore } from './lead.store.js';

type Json = Record<string, unknown>;

/** A lead detail as JSON text without its time- and count-dependent parts. */
interface CachedDetail {
  id: string;
  /** leads.detail_version and the company's detail_catalog_versions.version it was read at. */
  version: number;
  catalogVersion: number;
  head: string;
  tail: string;
  stagePeriods: SalesDetailExtras['stagePeriods'];
  /** The lead's persons: chat fields are asked of chat per read, never cached. */
  persons: LeadPerson[];
}

export interface LeadPerson {
  id: string;
  name: string;
}

export type ChatFieldsOf = (persons: LeadPerson[]) => Promise<string>;

/** Chat fields when the key may not read chats or the lead has no person (spec: flags false, lists empty). */
export const NO_CHAT_FIELDS = '"has_channel_chat":false,"channel_chats":[],"has_whatsapp_chat":false,"whatsapp_chats":[]';

/** Marks where chat fields go in a cached text; not valid JSON, so no JSON text contains it. */
const CHAT_MARK = '\u0000chat-fields\u0000';
const TASKS_MARK = JSON.stringify('\u0000tasks\u0000');

const approximateBytes = (d: CachedDetail, key: string) =>
  2 * (d.head.length + d.tail.length + key.length) + 128 * (d.stagePeriods.length + d.persons.length);

interface Check {
  companyId: string;
  ref: string;
  byId: boolean;
  userId: string;
}

/** GET lead detail, cached per company and reference and checked against trigger-bumped versions (decision 0015). */
export class LeadDetails {
  private readonly cache: LRUCache<string, CachedDetail>;
  private readonly loading = new Map<string, Promise<CachedDetail | null>>();
  private readonly checks: KeyedBatcher<Check, DetailCheckRow>;
  private readonly idleMs: number;
  private purgedAt = performance.now();

  constructor(
    private readonly store: LeadStore,
    private readonly parts: (row: Json) => DetailParts<Lead>,
    options: { maxBytes?: number; idleMs?: number } = {},
  ) {
    // Bounded in bytes, not entries; idle details are dropped so leads read once do not fill it (decision 0223).
    this.idleMs = options.idleMs ?? 60_000;
    this.cache = new LRUCache({
      maxSize: options.maxBytes ?? 16 * 2 ** 20,
      sizeCalculation: approximateBytes,
      ttl: this.idleMs,
      updateAgeOnGet: true,
    });
    this.checks = new KeyedBatcher((_key, items) => this.check(items));
  }

  /** Null when the lead is absent from the company or hidden from the user. */
  async read(
    companyId: string,
    userId: string,
    ref: string,
    chatFields?: ChatFieldsOf,
    tasksOf?: (id: string) => Promise<number>,
  ): Promise<string | null> {
    const byId = isUuid(ref);
    const key = `${companyId}:${byId ? ref.toLowerCase() : ref}`;
    const cached = this.cache.get(key);
    // A cached lead's id is known: its task count is asked alongside the check, not after it (decision 0224). The
    // call starts after this read arrived, so it counts what a call after the check would.
    const early = cached && tasksOf ? tasksOf(cached.id) : undefined;
    const body = await this.readBody(key, cached, companyId, userId, ref, byId);
    if (!body) return null;
    const [chats, tasks] = await Promise.all([
      chatFields && body.persons.length ? chatFields(body.persons) : NO_CHAT_FIELDS,
      early && body.id === cached?.id ? early : tasksOf ? tasksOf(body.id) : 0,
    ]);
    return body.text.replace(CHAT_MARK, () => chats).replace(TASKS_MARK, () => String(tasks));
  }

  private async readBody(
    key: string,
    cached: CachedDetail | undefined,
    companyId: string,
    userId: string,
    ref: string,
    byId: boolean,
  ): Promise<{ id: string; text: string; persons: LeadPerson[] } | null> {
    if (!cached) return this.readFully(key, companyId, userId, byId ? ref : Number(ref), byId);
    const row = await this.checks.add(key, { companyId, ref, byId, userId });
    if (!row) return null;
    // Versions only grow: a detail read at versions at least those of this check shows everything it saw.
    const catalogVersion = Number(row._catalogVersion);
    let detail = this.cache.get(key) ?? cached;
    while (detail.version < row.version || detail.catalogVersion < catalogVersion) {
      const fresh = await this.reload(key, companyId, row.id);
      if (!fresh) return null;
      detail = fresh;
    }
    return { id: detail.id, text: this.body(detail, Number(row._nowUs), row.viewsCount), persons: detail.persons };
  }

  held(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.cache.calculatedSize };
  }

  /** Tests only. */
  clear(): void {
    this.cache.clear();
  }

  private async readFully(key: string, companyId: string, userId: string, ref: string | number, byId: boolean) {
    const row = await this.store.detail(await this.store.sales.pool, companyId, ref, byId, uuidv7(), userId);
    if (!row) return null;
    const detail = this.keep(key, row);
    return { id: detail.id, text: this.body(detail, Number(row._nowUs), row._viewsCount as number), persons: detail.persons };
  }

  /** Concurrent reloads of one key share one statement. */
  private reload(key: string, companyId: string, id: string): Promise<CachedDetail | null> {
    let p = this.loading.get(key);
    if (!p) {
      p = this.store.sales.pool
        .then((pool) => this.store.detailWithoutView(pool, companyId, id))
        .then((row) => (row ? this.keep(key, row) : null))
        .finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    return p;
  }

  private async check(items: Check[]): Promise<(DetailCheckRow | undefined)[]> {
    const [{ companyId, ref, byId }] = items as [Check];
    const rows = await this.store.checkDetail(
      await this.store.sales.pool,
      companyId,
      byId ? ref : null,
      byId ? null : Number(ref),
      items.map(() => uuidv7()),
      items.map((i) => i.userId),
    );
    const out: (DetailCheckRow | undefined)[] = new Array(items.length);
    for (const row of rows) out[row.n - 1] = row;
    return out;
  }

  private keep(key: string, row: Json): CachedDetail {
    const { record, head, stagePeriods, associations } = this.parts(row);
    // The chat fields come from the chat service per read: the cached text holds a mark where they go.
    const own = withoutChatFields(head);
    const participants = (head as { participants?: { person: { id: string; name: string } }[] }).participants ?? [];
    const detail: CachedDetail = {
      id: record.id,
      version: record.detailVersion,
      catalogVersion: Number(row._catalogVersion),
      head: `${JSON.stringify(own).slice(0, -1)},${CHAT_MARK}`,
      persons: participants.map((p) => ({ id: p.person.id, name: p.person.name })),
      tail: `,"associations_count":${JSON.stringify({ ...associations, tasks: 0 }).replace('"tasks":0', `"tasks":${TASKS_MARK}`)}}`,
      stagePeriods,
    };
    const held = this.cache.get(key);
    if (!held || held.version < detail.version || held.catalogVersion < detail.catalogVersion) this.cache.set(key, detail);
    // lru-cache drops an expired entry only when read: the ones never read again go here.
    if (performance.now() - this.purgedAt > this.idleMs / 2) {
      this.purgedAt = performance.now();
      this.cache.purgeStale();
    }
    return detail;
  }

  private body(detail: CachedDetail, nowUs: number, views: number): string {
    return `${detail.head},"stage_durations":${JSON.stringify(stageDurationsAt(detail.stagePeriods, nowUs))},"views_count":${views}${detail.tail}`;
  }
}
