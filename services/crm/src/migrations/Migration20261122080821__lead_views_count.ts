import { Migration } from '@mikro-orm/migrations';

/** leads.views_count: a counter kept by GET lead, seeded from the views recorded so far. */
export class Migration20261122080821__lead_views_count extends Migration {
  override name = 'Migration20261122080821__lead_views_count';

  override up(): void | Promise<void> {
    this.addSql(`alter table "crm"."leads" add "views_count" int not null default 0;`);
    this.addSql(
      `update "crm"."leads" l set "views_count" = v.n from (select lead_id, count(*)::int n from "crm"."lead_views" group by lead_id) v where v.lead_id = l.id;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "crm"."leads" drop column "views_count";`);
  }
}
