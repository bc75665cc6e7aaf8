import { Migration } from '@mikro-orm/migrations';

export class Migration20261125125318__satisfaction extends Migration {
  override name = 'Migration20261125125318__satisfaction';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."satisfaction_links" ("id" uuid not null, "company_id" uuid not null, "token_hash" varchar(64) not null, "record_type" varchar(20) not null, "record_id" uuid not null, "form_title" varchar(150) not null, "form_question" varchar(500) not null, "max_score" smallint not null, "created_by_id" uuid not null, "key_id" uuid not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "satisfaction_links_company_id_index" on "crm"."satisfaction_links" ("company_id");`);
    this.addSql(`alter table "crm"."satisfaction_links" add constraint "satisfaction_links_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "crm"."satisfaction_submissions" ("id" uuid not null, "company_id" uuid not null, "link_id" uuid not null, "score" smallint not null, "comment" text null, "submitted_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "crm"."satisfaction_submissions" add constraint "satisfaction_submissions_link_id_unique" unique ("link_id");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."satisfaction_links" cascade;`);
    this.addSql(`drop table if exists "crm"."satisfaction_submissions" cascade;`);
  }
}
