import { Migration } from '@mikro-orm/migrations';

export class Migration20261126111151_traceparent extends Migration {
  override name = 'Migration20261126111151_traceparent';

  override up(): void | Promise<void> {
    this.addSql(`alter table "files"."outbox" add "traceparent" varchar(55) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "files"."outbox" drop column "traceparent";`);
  }
}
