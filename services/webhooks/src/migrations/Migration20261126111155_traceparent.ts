import { Migration } from '@mikro-orm/migrations';

export class Migration20261126111155_traceparent extends Migration {
  override name = 'Migration20261126111155_traceparent';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhooks"."deliveries" add "traceparent" varchar(55) null;`);

    this.addSql(`alter table "webhooks"."outbox" add "traceparent" varchar(55) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhooks"."deliveries" drop column "traceparent";`);

    this.addSql(`alter table "webhooks"."outbox" drop column "traceparent";`);
  }
}
