import { Migration } from '@mikro-orm/migrations';

export class Migration20261126111145_traceparent extends Migration {
  override name = 'Migration20261126111145_traceparent';

  override up(): void | Promise<void> {
    this.addSql(`alter table "chat"."outbox" add "traceparent" varchar(55) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "chat"."outbox" drop column "traceparent";`);
  }
}
