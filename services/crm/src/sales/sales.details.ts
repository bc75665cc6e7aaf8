import { detailChatFields, linkedChats } from './sales.chats.js';
import type { SalesRecord } from './sales.entity.js';
import type { RecordKind, SalesSources } from './sales.kind.js';
import { type SalesDetailExtras, type SalesRelations, stageDurationsAt } from './sales.snapshot.js';
import type { SalesStore } from './sales.store.js';

type Json = Record<string, unknown>;

/** A record's detail less what depends on the time of the read. */
export interface DetailParts<R> {
  record: R;
  /** The snapshot and `pipeline_stages`. */
  head: Json;
  stagePeriods: SalesDetailExtras['stagePeriods'];
  /** The database's time of the statement that read it, in microseconds since the epoch. */
  nowUs: number;
  associations: Record<string, number>;
}

/**
 * The detail of a lead or deal (GET /leads/{id}, GET /deals/{id}) from a row of `relationsSelect(alias, { detail: true
 * })`: the kind's snapshot with `pipeline_stages`, `stage_durations`, `associations_count`, and the fields other
 * services keep (chats, task counts), asked at each read.
 */
export class SalesDetails<R extends SalesRecord, Rel extends SalesRelations, S extends { updated_at: string }> {
  constructor(
    private readonly store: SalesStore<R, Rel>,
    private readonly kind: RecordKind<R, Rel, S, never, never>,
    private readonly sources: SalesSources,
  ) {}

  /**
   * The detail in the parts a cached lead detail keeps apart (decision 0015): `head`, the snapshot plus
   * `pipeline_stages`; the stage periods `stage_durations` is computed from at the time of a read; `associations_count`
   * of what crm keeps (docs/leads.md): `tasks` is asked of the tasks service at each read (`tasksOf`), `activities`
   * has no source.
   */
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

  /** The detail at the time of the statement that read it. */
  of(row: Json) {
    const { head, stagePeriods, nowUs, associations } = this.parts(row);
    return { ...head, stage_durations: stageDurationsAt(stagePeriods, nowUs), associations_count: associations };
  }

  /**
   * The chat fields of a detail (spec, Lead detail; `whatsapp_*` the alias of the summaries), asked of chat for
   * `persons` (none: no call). The caller asks only for a key with crm/chats.read.
   */
  async chatFields(companyId: string, persons: { id: string; name: string | null }[]) {
    const ids = persons.map((p) => p.id);
    const source = this.sources.chats;
    const chats = source && ids.length ? await linkedChats(source, await this.store.pool, companyId, ids) : [];
    return detailChatFields(chats, persons);
  }

  /** `associations_count.tasks` of record `id`: asked of tasks at each read (0 without a source, or when it fails). */
  tasksOf(companyId: string, id: string): Promise<number> {
    return this.sources.tasks ? this.sources.tasks.recordTasks(companyId, this.kind.kind, id) : Promise.resolve(0);
  }
}
