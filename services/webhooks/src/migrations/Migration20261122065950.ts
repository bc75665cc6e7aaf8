import { Migration } from '@mikro-orm/migrations';

/** Leases up to max_rows due deliveries, no more of one subscription than its free slots (see Dispatcher.claim). */
const CLAIM_FUNCTION = `create or replace function "webhooks".claim_deliveries(per_subscription int, max_rows int, lease_seconds double precision)
returns setof "webhooks".deliveries language plpgsql volatile as $fn$
begin
  perform pg_advisory_xact_lock(hashtext('webhooks:claim-deliveries'));
  return query
  with recursive subs as (
    (select d.subscription_id from "webhooks".deliveries d where d.status = 'pending' order by d.subscription_id limit 1)
    union all
    select (select d.subscription_id from "webhooks".deliveries d
             where d.status = 'pending' and d.subscription_id > subs.subscription_id
             order by d.subscription_id limit 1)
      from subs where subs.subscription_id is not null),
  free as (
    select s.subscription_id,
           per_subscription - (select count(*) from "webhooks".deliveries l
                                 where l.status = 'pending' and l.lease_until is not null
                                   and l.subscription_id = s.subscription_id and l.lease_until >= now()) as slots
      from subs s where s.subscription_id is not null),
  candidates as (
    select c.id, c.next_attempt_at from free f cross join lateral (
      select d.id, d.next_attempt_at from "webhooks".deliveries d
       where d.status = 'pending' and d.subscription_id = f.subscription_id and d.next_attempt_at <= now()
         and (d.lease_until is null or d.lease_until < now())
       order by d.next_attempt_at, d.id limit greatest(least(f.slots, max_rows), 0)) c),
  chosen as (select candidates.id from candidates order by candidates.next_attempt_at, candidates.id limit max_rows),
  leased as (
    update "webhooks".deliveries d set lease_until = now() + make_interval(secs => lease_seconds)
      from chosen where d.id = chosen.id
    returning d.*)
  select * from leased;
end
$fn$;`;

/**
 * The dispatcher's claim looks up each subscription's oldest due deliveries and counts its leased ones, instead
 * of ranking every due row: both need only pending rows (MikroORM's snapshot does not keep the predicate). The
 * claim itself is a function, so that taking the advisory lock and leasing are one statement (one round trip,
 * a plan cached per connection); in a volatile PL/pgSQL function each statement takes a new snapshot, so the
 * leasing statement sees every lease committed by the claims that held the lock before.
 */
export class Migration20261122065950 extends Migration {
  override name = 'Migration20261122065950';

  override up(): void | Promise<void> {
    this.addSql(
      `create index "deliveries_pending_subscription_idx" on "webhooks"."deliveries" ("subscription_id", "next_attempt_at", "id") where "status" = 'pending';`,
    );
    this.addSql(
      `create index "deliveries_leased_subscription_idx" on "webhooks"."deliveries" ("subscription_id", "lease_until") where "status" = 'pending' and "lease_until" is not null;`,
    );
    this.addSql(CLAIM_FUNCTION);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function "webhooks".claim_deliveries(int, int, double precision);`);
    this.addSql(`drop index "webhooks"."deliveries_pending_subscription_idx";`);
    this.addSql(`drop index "webhooks"."deliveries_leased_subscription_idx";`);
  }
}
