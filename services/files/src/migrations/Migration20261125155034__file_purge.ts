import { Migration } from '@mikro-orm/migrations';

export class Migration20261125155034__file_purge extends Migration {
  override name = 'Migration20261125155034__file_purge';

  override up(): void | Promise<void> {
    this.addSql(`alter table "files"."files" add "purged_at" timestamptz null;`);
    this.addSql(`create index "files_purge_idx" on files.files ("deleted_at") where "deleted_at" is not null and "purged_at" is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "files"."files_purge_idx";`);
    this.addSql(`alter table "files"."files" drop column "purged_at";`);
  }
}
