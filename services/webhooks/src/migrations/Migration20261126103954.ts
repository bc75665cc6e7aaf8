import { Migration } from '@mikro-orm/migrations';

/**
 * claim_deliveries as in migration 20261122081502, and the lease names its holder: `owner`, the claiming
 * dispatcher's id (decision 0156).
 */
const CLAIM_FUNCTION = `create or replace function "webhooks".claim_deliveries(per_subscription int, max_rows int, lease_seconds double precision, owner uuid)
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
    update "webhooks".deliveries d set lease_until = now() + make_interval(secs => lease_seconds), lease_owner = owner
      from chosen
     where d.id = chosen.id and d.status = 'pending' and (d.lease_until is null or d.lease_until < now())
    returning d.*)
  select * from leased;
end
$fn$;`;

/** The function this one replaces, for down(). */
const PREVIOUS_CLAIM_FUNCTION = `create or replace function "webhooks".claim_deliveries(per_subscription int, max_rows int, lease_seconds double precision)
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
 * A lease names the process holding it (decision 0156): leases are short and renewed by their holder while its
 * attempt runs, and only the holder records the attempt, so a replica that stops making progress loses its
 * deliveries to another within seconds and cannot overwrite what that one recorded.
 */
export class Migration20261126103954 extends Migration {
  override name = 'Migration20261126103954';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhooks"."deliveries" add "lease_owner" uuid null;`);
    this.addSql(`drop function "webhooks".claim_deliveries(int, int, double precision);`);
    this.addSql(CLAIM_FUNCTION);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function "webhooks".claim_deliveries(int, int, double precision, uuid);`);
    this.addSql(PREVIOUS_CLAIM_FUNCTION);
    this.addSql(`alter table "webhooks"."deliveries" drop column "lease_owner";`);
  }
}
