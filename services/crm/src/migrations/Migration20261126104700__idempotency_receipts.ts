import { Migration } from '@mikro-orm/migrations';

export class Migration20261126104700__idempotency_receipts extends Migration {
  override name = 'Migration20261126104700__idempotency_receipts';

  override up(): void | Promise<void> {
    this.addSql(`alter table "crm"."deal_idempotency_keys" add "persons" jsonb null;`);

    this.addSql(`alter table "crm"."lead_idempotency_keys" add "persons" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "crm"."deal_idempotency_keys" drop column "persons";`);

    this.addSql(`alter table "crm"."lead_idempotency_keys" drop column "persons";`);
  }
}
