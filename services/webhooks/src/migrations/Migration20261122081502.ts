import { Migration } from '@mikro-orm/migrations';

/**
 * Leases up to max_rows due deliveries, no more of one subscription than its free slots (see Dispatcher.claim):
 * queued ones (pending, no lease) oldest first, and those whose lease ran out (their process died).
 */
const CLAIM_FUNCTION = `create or replace function "webhooks".claim_deliveries(per_subscription int, max_rows int, lease_seconds double precision)
returns setof "webhooks".deliveries language plpgsql volatile as $fn$
begin
  perform pg_advisory_xact_lock(hashtext('webhooks:claim-deliveries'));
  return query
  with recursive queued as (
    (select d.subscription_id from "webhooks".deliveries d
      where d.status = 'pending' and d.lease_until is null order by d.subscription_id limit 1)
    union all
    select (select d.subscription_id from "webhooks".deliveries d
             where d.status = 'pending' and d.lease_until is null and d.subscription_id > q.subscription_id
             order by d.subscription_id limit 1)
      from queued q where q.subscription_id is not null),
  held as (
    (select d.subscription_id from "webhooks".deliveries d
      where d.status = 'pending' and d.lease_until is not null order by d.subscription_id limit 1)
    union all
    select (select d.subscription_id from "webhooks".deliveries d
             where d.status = 'pending' and d.lease_until is not null and d.subscription_id > h.subscription_id
             order by d.subscription_id limit 1)
      from held h where h.subscription_id is not null),
  subs as (
    select q.subscription_id from queued q where q.subscription_id is not null
    union
    select h.subscription_id from held h
     where h.subscription_id is not null
       and exists (select 1 from "webhooks".deliveries d
                    where d.status = 'pending' and d.lease_until is not null
                      and d.subscription_id = h.subscription_id and d.lease_until < now())),
  free as (
    select s.subscription_id,
           greatest(least(per_subscription - (select count(*) from "webhooks".deliveries l
                                                where l.status = 'pending' and l.lease_until is not null
                                                  and l.subscription_id = s.subscription_id and l.lease_until >= now()),
                          max_rows), 0) as slots
      from subs s),
  candidates as (
    select c.id, c.next_attempt_at from free f cross join lateral (
      select u.id, u.next_attempt_at from (
        (select d.id, d.next_attempt_at from "webhooks".deliveries d
          where d.status = 'pending' and d.lease_until is null and d.subscription_id = f.subscription_id
            and d.next_attempt_at <= now()
          order by d.next_attempt_at, d.id limit f.slots)
        union all
        (select d.id, d.next_attempt_at from "webhooks".deliveries d
          where d.status = 'pending' and d.lease_until is not null and d.subscription_id = f.subscription_id
            and d.lease_until < now()
          order by d.lease_until limit f.slots)) u
      order by u.next_attempt_at, u.id limit f.slots) c),
  chosen as (select candidates.id from candidates order by candidates.next_attempt_at, candidates.id limit max_rows),
  leased as (
    update "webhooks".deliveries d set lease_until = now() + make_interval(secs => lease_seconds)
      from chosen
     where d.id = chosen.id and d.status = 'pending' and (d.lease_until is null or d.lease_until < now())
    returning d.*)
  select * from leased;
end
$fn$;`;

/**
 * The leases new deliveries can get as they are inserted (EventConsumer.issueAll): per subscription, how many more
 * of its deliveries may be leased now. Takes the claims' lock, held until the inserting transaction commits, so
 * issues and claims of all replicas count each other's leases.
 */
const SLOTS_FUNCTION = `create or replace function "webhooks".lock_delivery_slots(subscription_ids uuid[], per_subscription int)
returns table (subscription_id uuid, slots int) language plpgsql volatile as $fn$
begin
  perform pg_advisory_xact_lock(hashtext('webhooks:claim-deliveries'));
  return query
  select s.id,
         greatest(per_subscription - (select count(*) from "webhooks".deliveries l
                                       where l.status = 'pending' and l.lease_until is not null
                                         and l.subscription_id = s.id and l.lease_until >= now())::int, 0)
    from unnest(subscription_ids) s(id);
end
$fn$;`;

/**
 * Deliveries are leased as they are issued (the consumer hands them to its own dispatcher), so most never enter
 * the queue of unleased ones: that index now holds only those (it held every pending delivery), and the claim
 * looks for queued deliveries and for expired leases separately. The due index was used by no query.
 */
export class Migration20261122081502 extends Migration {
  override name = 'Migration20261122081502';

  override up(): void | Promise<void> {
    this.addSql(`drop index "webhooks"."deliveries_due_idx";`);
    this.addSql(`drop index "webhooks"."deliveries_pending_subscription_idx";`);
    this.addSql(
      `create index "deliveries_queued_idx" on "webhooks"."deliveries" ("subscription_id", "next_attempt_at", "id") where "status" = 'pending' and "lease_until" is null;`,
    );
    this.addSql(CLAIM_FUNCTION);
    this.addSql(SLOTS_FUNCTION);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function "webhooks".lock_delivery_slots(uuid[], int);`);
    this.addSql(`drop index "webhooks"."deliveries_queued_idx";`);
    this.addSql(
      `create index "deliveries_pending_subscription_idx" on "webhooks"."deliveries" ("subscription_id", "next_attempt_at", "id") where "status" = 'pending';`,
    );
    this.addSql(`create index "deliveries_due_idx" on "webhooks"."deliveries" ("next_attempt_at") where "status" = 'pending';`);
  }
}
