import { Migration } from '@mikro-orm/migrations';

export class Migration20261126101846_subscriber_webhooks extends Migration {
  override name = 'Migration20261126101846_subscriber_webhooks';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhooks"."delivery_attempts" add "response_body" text null;`);

    this.addSql(`alter table "webhooks"."subscriptions" add "description" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhooks"."delivery_attempts" drop column "response_body";`);

    this.addSql(`alter table "webhooks"."subscriptions" drop column "description";`);
  }
}
