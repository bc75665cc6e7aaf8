import { conflict, forbidden, notFound } from '@svc/platform/errors';
import type { SalesRecord } from './sales.entity.js';
import { type Actor, refOf } from './sales.rules.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Db, SalesStore } from './sales.store.js';

const EXTERNAL = 'ext:';

/** A UUID, a code or `ext:<external_id>` (decision 0180); 404 absent, 403 hidden (decision 0041). */
export class SalesRefs {
  constructor(
    private readonly store: SalesStore<SalesRecord, SalesRelations>,
    readonly label: string,
  ) {}

  /** Null when no live record has that external id; other refs pass unchanged. */
  async resolve(companyId: string, ref: string): Promise<string | null> {
    if (!ref.startsWith(EXTERNAL)) return ref;
    return this.externalIdOf(companyId, ref.slice(EXTERNAL.length));
  }

  async externalIdOf(companyId: string, externalId: string, db?: Db): Promise<string | null> {
    if (!externalId) return null;
    return this.store.findExternal(db ?? (await this.store.pool), companyId, externalId);
  }

  /** A unique violation on external ids becomes a 409 naming the holder. */
  async externalIdTaken(err: unknown, companyId: string, externalId: string | null | undefined): Promise<unknown> {
    const pg = err as { code?: string; constraint?: string };
    if (!externalId || pg?.code !== '23505' || pg.constraint !== `${this.store.table}_company_external_id_unique`) return err;
    const holder = await this.externalIdOf(companyId, externalId);
    return conflict(holder ? `external_id: already the external id of ${this.store.kind} ${holder}` : 'external_id: already in use');
  }

  async requireOf(companyId: string, ref: string): Promise<string> {
    const id = ref.startsWith(EXTERNAL) ? await this.externalIdOf(companyId, ref.slice(EXTERNAL.length)) : await this.idOf(companyId, ref);
    if (!id) throw notFound(this.label);
    return id;
  }

  private async idOf(companyId: string, ref: string): Promise<string | null> {
    const r = refOf(ref);
    return r ? this.store.findId(await this.store.pool, companyId, r) : null;
  }

  async visibleId(actor: Actor, given: string): Promise<string> {
    const ref = await this.resolve(actor.companyId, given);
    const r = ref && refOf(ref);
    if (!r) throw notFound(this.label);
    const found = await this.store.findVisible(await this.store.pool, actor.companyId, r, actor.userId);
    if (!found) throw notFound(this.label);
    if (!found.visible) throw forbidden(`The key creator may not see this ${this.store.kind}`);
    return found.id;
  }

  async refuse(actor: Actor, ref: string): Promise<never> {
    await this.visibleId(actor, ref);
    throw notFound(this.label);
  }
}
