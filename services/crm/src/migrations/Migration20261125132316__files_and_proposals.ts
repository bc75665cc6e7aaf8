import { Migration } from '@mikro-orm/migrations';

/**
 * Proposals, their items, the company's library of documents and the proposals' attachments (decision 0078), and the
 * live file counts the files service reports (decision 0076). One live primary proposal per lead and per deal
 * (partial unique indexes). The lead detail reads `proposals` and `record_file_counts`, so a change of either bumps
 * the lead's detail_version like every lead-specific table the detail reads (decision 0015); rows of a deal name no
 * lead and bump nothing. Items and attachments are not in the detail.
 */
const DETAIL_TABLES: [string, string][] = [
  ['proposals', 'lead_id'],
  ['record_file_counts', 'record_id'],
];

export class Migration20261125132316__files_and_proposals extends Migration {
  override name = 'Migration20261125132316__files_and_proposals';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."proposals" ("id" uuid not null, "company_id" uuid not null, "code" int not null, "lead_id" uuid null, "deal_id" uuid null, "title" varchar(150) not null, "version" int not null, "status" smallint not null, "is_primary" boolean not null, "discount_type" varchar(20) null, "discount_value" numeric(14,2) null, "subtotal" numeric(16,2) not null, "total" numeric(16,2) not null, "valid_until" timestamptz null, "notes" text null, "created_by_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "approved_at" timestamptz null, "approved_by_id" uuid null, "rejected_at" timestamptz null, "rejected_by_id" uuid null, "archived_at" timestamptz null, "deleted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "proposals_company_lead_idx" on "crm"."proposals" ("company_id", "lead_id", "created_at");`);
    this.addSql(`create index "proposals_company_deal_idx" on "crm"."proposals" ("company_id", "deal_id", "created_at");`);
    this.addSql(`alter table "crm"."proposals" add constraint "proposals_company_code_unique" unique ("company_id", "code");`);

    this.addSql(
      `create table "crm"."proposal_attachments" ("id" uuid not null, "company_id" uuid not null, "proposal_id" uuid not null, "kind" varchar(10) not null, "file_id" uuid null, "document_id" uuid null, "file_name" varchar(255) not null, "mime_type" varchar(255) not null, "file_size" bigint not null, "created_by_id" uuid not null, "created_at" timestamptz not null, "deleted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(
      `create index "proposal_attachments_proposal_idx" on "crm"."proposal_attachments" ("company_id", "proposal_id", "created_at");`,
    );

    this.addSql(
      `create table "crm"."proposal_documents" ("id" uuid not null, "company_id" uuid not null, "name" varchar(200) not null, "file_name" varchar(255) not null, "mime_type" varchar(255) not null, "file_size" bigint not null, "url" varchar(2000) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );

    this.addSql(
      `create table "crm"."proposal_items" ("id" uuid not null, "company_id" uuid not null, "proposal_id" uuid not null, "position" int not null, "name" varchar(200) not null, "description" text null, "quantity" numeric(14,4) not null, "unit_price" numeric(14,2) not null, "total" numeric(16,2) not null, primary key ("id"));`,
    );
    this.addSql(`create index "proposal_items_proposal_idx" on "crm"."proposal_items" ("company_id", "proposal_id", "position");`);

    this.addSql(
      `create table "crm"."record_file_counts" ("company_id" uuid not null, "record_id" uuid not null, "kind" varchar(10) not null, "files_count" int not null, "version" bigint not null, "updated_at" timestamptz not null, primary key ("company_id", "record_id"));`,
    );
    this.addSql(
      `create unique index "proposals_one_primary_per_lead" on "crm"."proposals" ("company_id", "lead_id") where "is_primary" and "deleted_at" is null and "lead_id" is not null;`,
    );
    this.addSql(
      `create unique index "proposals_one_primary_per_deal" on "crm"."proposals" ("company_id", "deal_id") where "is_primary" and "deleted_at" is null and "deal_id" is not null;`,
    );
    for (const [table, column] of DETAIL_TABLES)
      for (const [event, referencing] of [
        ['insert', 'referencing new table as new_rows'],
        ['update', 'referencing old table as old_rows new table as new_rows'],
        ['delete', 'referencing old table as old_rows'],
      ])
        this.addSql(
          `create trigger "${table}_detail_${event}" after ${event} on "crm"."${table}" ${referencing} for each statement execute function "crm"."bump_lead_details"('${column}');`,
        );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."proposals" cascade;`);
    this.addSql(`drop table if exists "crm"."proposal_attachments" cascade;`);
    this.addSql(`drop table if exists "crm"."proposal_documents" cascade;`);
    this.addSql(`drop table if exists "crm"."proposal_items" cascade;`);
    this.addSql(`drop table if exists "crm"."record_file_counts" cascade;`);
  }
}
