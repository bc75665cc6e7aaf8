import { Migration } from '@mikro-orm/migrations';

export class Migration20261122055549 extends Migration {
  override name = 'Migration20261122055549';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "webhooks"."subscriptions" add "previous_secret" varchar(200) null, add "previous_secret_expires_at" timestamptz null, add "consecutive_failures" int not null default 0, add "failing_since" timestamptz null, add "disabled_at" timestamptz null, add "disabled_reason" text null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(
      `alter table "webhooks"."subscriptions" drop column "previous_secret", drop column "previous_secret_expires_at", drop column "consecutive_failures", drop column "failing_since", drop column "disabled_at", drop column "disabled_reason";`,
    );
  }
}
