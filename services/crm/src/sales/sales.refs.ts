import { conflict, forbidden, notFound } from '@svc/platform/errors';
import type { SalesRecord } from './sales.entity.js';
import { type Actor, refOf } from './sales.rules.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Db, SalesStore } from './sales.store.js';

/** A ref naming a record by its external id (decision 0180). */
const EXTERNAL = 'ext:';

/**
 * How a request names a record of one kind: a UUID, a code, or `ext:<external_id>` (decision 0180), resolved to the
 * record's id; with the visibility check (404 absent or another company's, 403 hidden, decision 0041) and the 409 of an
 * external id another record holds.
 */
export class SalesRefs {
  constructor(
    private readonly store: SalesStore<SalesRecord, SalesRelations>,
    /** `Lead` or `Deal`, for not-found messages. */
    readonly label: string,
  ) {}

  /**
   * `ref` with an `ext:<external_id>` form replaced by the record's UUID; null when no live record of the company has
   * that external id. Other refs are returned as they are.
   */
  async resolve(companyId: string, ref: string): Promise<string | null> {
    if (!ref.startsWith(EXTERNAL)) return ref;
    return this.externalIdOf(companyId, ref.slice(EXTERNAL.length));
  }

  /** The id of the live record of the company with this external id, or null. */
  async externalIdOf(companyId: string, externalId: string, db?: Db): Promise<string | null> {
    if (!externalId) return null;
    return this.store.findExternal(db ?? (await this.store.pool), companyId, externalId);
  }

  /**
   * A write refused by the unique index of external ids becomes a 409 naming the record that holds the id; any other
   * error is returned as it is.
   */
  async externalIdTaken(err: unknown, companyId: string, externalId: string | null | undefined): Promise<unknown> {
    const pg = err as { code?: string; constraint?: string };
    if (!externalId || pg?.code !== '23505' || pg.constraint !== `${this.store.table}_company_external_id_unique`) return err;
    const holder = await this.externalIdOf(companyId, externalId);
    return conflict(holder ? `external_id: already the external id of ${this.store.kind} ${holder}` : 'external_id: already in use');
  }

  /** The id of a record of the company (404 when there is none). */
  async requireOf(companyId: string, ref: string): Promise<string> {
    const id = ref.startsWith(EXTERNAL) ? await this.externalIdOf(companyId, ref.slice(EXTERNAL.length)) : await this.idOf(companyId, ref);
    if (!id) throw notFound(this.label);
    return id;
  }

  private async idOf(companyId: string, ref: string): Promise<string | null> {
    const r = refOf(ref);
    return r ? this.store.findId(await this.store.pool, companyId, r) : null;
  }

  /** A record the actor may see: its id. */
  async visibleId(actor: Actor, given: string): Promise<string> {
    const ref = await this.resolve(actor.companyId, given);
    const r = ref && refOf(ref);
    if (!r) throw notFound(this.label);
    const found = await this.store.findVisible(await this.store.pool, actor.companyId, r, actor.userId);
    if (!found) throw notFound(this.label);
    if (!found.visible) throw forbidden(`The key creator may not see this ${this.store.kind}`);
    return found.id;
  }

  /** The answer to a detail statement that returned nothing: 404 (absent, another company's) or 403 (hidden). */
  async refuse(actor: Actor, ref: string): Promise<never> {
    await this.visibleId(actor, ref);
    throw notFound(this.label);
  }
}
