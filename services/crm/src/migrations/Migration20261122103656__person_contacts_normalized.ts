import { Migration } from '@mikro-orm/migrations';

/** Person deduplication compares normalized contacts (e-mail without case, phone digits): an index on that expression. */

export class Migration20261122103656__person_contacts_normalized extends Migration {
  override name = 'Migration20261122103656__person_contacts_normalized';

  override up(): void | Promise<void> {
    this.addSql(
      `create index "person_contacts_normalized_idx" on crm.person_contacts (company_id, type, (case when type = 1 then lower(trim(value)) when type = 2 then regexp_replace(value, '\\D', '', 'g') else trim(value) end));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "crm"."person_contacts_normalized_idx";`);
  }
}
