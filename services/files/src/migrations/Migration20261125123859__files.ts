import { Migration } from '@mikro-orm/migrations';

export class Migration20261125123859__files extends Migration {
  override name = 'Migration20261125123859__files';

  override up(): void | Promise<void> {
    // Versions of the file counts sent to crm (decision 0076): a sequence, so a rolled-back change never reuses one.
    this.addSql(`create sequence "files"."file_count_versions";`);
    this.addSql(
      `create table "files"."file_batches" ("id" uuid not null, "company_id" uuid not null, "files_count" int not null, "total_size" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );

    this.addSql(
      `create table "files"."files" ("id" uuid not null, "company_id" uuid not null, "crm_lead_id" uuid null, "crm_deal_id" uuid null, "crm_proposal_id" uuid null, "batch_id" uuid not null, "file_name" varchar(255) not null, "mime_type" varchar(255) not null, "file_size" bigint not null, "storage_key" varchar(300) not null, "created_by_id" uuid not null, "created_at" timestamptz not null, "deleted_at" timestamptz null, "deleted_by_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`create index "files_company_lead_idx" on "files"."files" ("company_id", "crm_lead_id", "created_at", "id");`);
    this.addSql(`create index "files_company_deal_idx" on "files"."files" ("company_id", "crm_deal_id", "created_at", "id");`);
    this.addSql(`create index "files_company_proposal_idx" on "files"."files" ("company_id", "crm_proposal_id", "created_at", "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop sequence if exists "files"."file_count_versions";`);
    this.addSql(`drop table if exists "files"."file_batches" cascade;`);
    this.addSql(`drop table if exists "files"."files" cascade;`);
  }
}
