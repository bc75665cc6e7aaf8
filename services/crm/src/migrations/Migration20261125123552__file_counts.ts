import { Migration } from '@mikro-orm/migrations';

/**
 * The live file counts the files service reports (decision 0076). The lead detail reads them, so a change bumps the
 * lead's detail_version like every lead-specific table the detail reads (decision 0015); a deal's row names no lead
 * and bumps nothing.
 */
export class Migration20261125123552__file_counts extends Migration {
  override name = 'Migration20261125123552__file_counts';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "crm"."record_file_counts" ("company_id" uuid not null, "record_id" uuid not null, "kind" varchar(10) not null, "files_count" int not null, "version" bigint not null, "updated_at" timestamptz not null, primary key ("company_id", "record_id"));`,
    );
    for (const [event, referencing] of [
      ['insert', 'referencing new table as new_rows'],
      ['update', 'referencing old table as old_rows new table as new_rows'],
      ['delete', 'referencing old table as old_rows'],
    ])
      this.addSql(
        `create trigger "record_file_counts_detail_${event}" after ${event} on "crm"."record_file_counts" ${referencing} for each statement execute function "crm"."bump_lead_details"('record_id');`,
      );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "crm"."record_file_counts" cascade;`);
  }
}
