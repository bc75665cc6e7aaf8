import { detailChatFields, linkedChats } from './sales.chats.js';
import type { SalesRecord } from './sales.entity.js';
import type { RecordKind, SalesSources } from './sales.kind.js';
import { type SalesDetailExtras, type SalesRelations, stageDurationsAt } from './sales.snapshot.js';
import type { SalesStore } from './sales.store.js';

type Json = Record<string, unknown>;

export interface DetailParts<R> {
  record: R;
  head: Json;
  stagePeriods: SalesDetailExtras['stagePeriods'];
  /** Microseconds since the epoch, database time. */
  nowUs: number;
  associations: Record<string, number>;
}

export class SalesDetails<R extends SalesRecord, Rel extends SalesRelations, S extends { updated_at: string }> {
  constructor(
    private readonly store: SalesStore<R, Rel>,
    private readonly kind: RecordKind<R, Rel, S, never, never>,
    private readonly sources: SalesSources,
  ) {}

  /** Split so a cached lead detail keeps time-dependent parts apart (decision 0015); task counts are asked per read. */
  parts(row: Json): DetailParts<R> {
    const { record, rel } = this.store.select.fromRow(row);
    const extras = this.store.select.detailExtrasFromRow(row);
    return {
      record,
      head: {
        ...this.kind.snapshot(record, rel),
        pipeline_stages: rel.pipelineStages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
      },
      stagePeriods: extras.stagePeriods,
      nowUs: extras.nowUs,
      associations: {
        items: extras.itemsCount,
        tasks: 0,
        // The spec's qualification is the quality rating (quality_updated fires when it is created or changed).
        qualifications: record.qualityRating === null ? 0 : 1,
        notes: extras.notesCount,
        files: extras.filesCount,
        activities: 0,
        proposals: rel.proposals.length,
        deals: rel.deals.length,
      },
    };
  }

  of(row: Json) {
    const { head, stagePeriods, nowUs, associations } = this.parts(row);
    return { ...head, stage_durations: stageDurationsAt(stagePeriods, nowUs), associations_count: associations };
  }

  /** The caller asks only for a key with crm/chats.read. */
  async chatFields(companyId: string, persons: { id: string; name: string | null }[]) {
    const ids = persons.map((p) => p.id);
    const source = this.sources.chats;
    const chats = source && ids.length ? await linkedChats(source, await this.store.pool, companyId, ids) : [];
    return detailChatFields(chats, persons);
  }

  /** 0 without a source or when tasks fails. */
  tasksOf(companyId: string, id: string): Promise<number> {
    return this.sources.tasks ? this.sources.tasks.recordTasks(companyId, this.kind.kind, id) : Promise.resolve(0);
  }
}
