import { Migration } from '@mikro-orm/migrations';

export class Migration20261122063300__marketing_acquisitions extends Migration {
  override name = 'Migration20261122063300__marketing_acquisitions';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."marketing_acquisitions" ("id" uuid not null, "company_id" uuid not null, "lead_id" uuid not null, "active" boolean not null, "created_at" timestamptz not null, "tracker_id" uuid null, "lead_source_id" uuid null, "svc_code" varchar(200) null, "svc_source" varchar(200) null, "svc_campaign" varchar(255) null, "svc_ad_set" varchar(255) null, "svc_content" varchar(255) null, "svc_displayed_on" varchar(255) null, "svc_conversion_tool" varchar(255) null, "svc_creative" varchar(255) null, "gclid" varchar(500) null, "fbclid" varchar(500) null, "utm_search_term" varchar(255) null, "utm_source" varchar(200) null, "utm_medium" varchar(255) null, "utm_campaign" varchar(255) null, "utm_ad_set" varchar(255) null, "utm_content" varchar(255) null, "utm_term" varchar(255) null, "utm_display_on" varchar(255) null, "url_conversion" text null, "conversion_url_full" text null, "measurement_consent" varchar(20) null, primary key ("id"));`,
    );
    this.addSql(`create index "marketing_acquisitions_lead_created_idx" on "crm"."marketing_acquisitions" ("lead_id", "created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."marketing_acquisitions" cascade;`);
  }
}
