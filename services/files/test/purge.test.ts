import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createLogger } from '@svc/platform/logging';
import { type RunningService, startService } from '@svc/platform/service';
import { eventually, type TestDatabase } from '@svc/platform/testing';
import { serviceTestEnv } from '@svc/platform/testing-suite';
import { expect } from 'chai';
import pg from 'pg';
import S3rver from 's3rver';
import { FilePurger } from '../src/files/file.purge.js';
import { filesService } from '../src/service.js';
import { LocalStorage } from '../src/storage/local.js';
import { S3Storage } from '../src/storage/s3.js';
import type { FileStorage } from '../src/storage/storage.js';

const logger = createLogger('purge-test', 'silent');
const RETENTION_DAYS = 30;

/** A storage that counts deletions per key and fails those of `failing` (a storage that is down for one key). */
class WatchedStorage implements FileStorage {
  readonly deletes = new Map<string, number>();
  failing = new Set<string>();
  constructor(readonly inner: FileStorage) {}
  get kind() {
    return this.inner.kind;
  }
  put(key: string, body: Readable) {
    return this.inner.put(key, body);
  }
  get(key: string) {
    return this.inner.get(key);
  }
  async delete(key: string) {
    if (this.failing.has(key)) throw new Error(`storage refused ${key}`);
    this.deletes.set(key, (this.deletes.get(key) ?? 0) + 1);
    await this.inner.delete(key);
  }
  check() {
    return this.inner.check();
  }
}

/** The files schema of a migrated files service, on a fresh database. */
async function migratedDatabase(dir: string): Promise<{ db: TestDatabase; service: RunningService }> {
  const { env, db } = await serviceTestEnv({ CRM_GRPC_URL: '127.0.0.1:1', FILES_LOCAL_DIR: dir, FILES_PURGE_INTERVAL_MS: '0' });
  return { db, service: (await startService(filesService, env)) as RunningService };
}

const storages: { kind: string; open: () => Promise<{ storage: FileStorage; close: () => Promise<void> }> }[] = [
  {
    kind: 'local storage',
    open: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'files-purge-'));
      return { storage: new LocalStorage(dir), close: () => rm(dir, { recursive: true, force: true }) };
    },
  },
  {
    // The S3 adapter against s3rver, an S3-compatible server on loopback (decision 0075).
    kind: 'S3 storage (s3rver)',
    open: async () => {
      const dir = await mkdtemp(join(tmpdir(), 's3rver-purge-'));
      const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'purge' }] });
      const { port } = await server.run();
      const storage = new S3Storage({
        bucket: 'purge',
        region: 'us-east-1',
        endpoint: `http://127.0.0.1:${port}`,
        forcePathStyle: true,
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        prefix: 'files/',
        partSize: 5 * 1024 * 1024,
        queueSize: 2,
      });
      return {
        storage,
        close: async () => {
          storage.close();
          await server.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

for (const { kind, open } of storages) {
  describe(`the purge of removed files' bytes: ${kind} (decision 0136)`, function () {
    this.timeout(120_000);
    let db: TestDatabase;
    let service: RunningService;
    let dir: string;
    let pool: pg.Pool;
    let storage: WatchedStorage;
    let close: () => Promise<void>;
    const company = randomUUID();

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'files-purge-svc-'));
      ({ db, service } = await migratedDatabase(dir));
      pool = new pg.Pool({ connectionString: db.url, options: '-c search_path=files', max: 4 });
      const opened = await open();
      storage = new WatchedStorage(opened.storage);
      close = opened.close;
    });
    after(async () => {
      await pool?.end();
      await service?.stop();
      await close?.();
      await db?.drop();
      await rm(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      // Every test starts from an empty queue: what an earlier test left due is marked purged.
      await pool.query('update files set purged_at = now() where deleted_at is not null and purged_at is null');
      storage.deletes.clear();
      storage.failing.clear();
    });

    const purger = (batch = 10, p: pg.Pool = pool) =>
      new FilePurger(async () => p, storage, { retentionDays: RETENTION_DAYS, intervalMs: 0, batch, logger });

    /** A stored file with its bytes; removed `removedDaysAgo` days ago, or live (null). */
    const seed = async (removedDaysAgo: number | null) => {
      const id = randomUUID();
      const key = `${company}/${id}`;
      await storage.put(key, Readable.from([Buffer.from(`bytes of ${id}`)]));
      await pool.query(
        `insert into files (id, company_id, crm_lead_id, batch_id, file_name, mime_type, file_size, storage_key, created_by_id,
            created_at, deleted_at, deleted_by_id)
          values ($1, $2, $3, $4, 'a.txt', 'text/plain', 10, $5, $6, now() - interval '400 days',
            now() - make_interval(days => $7::int), case when $7::int is null then null else $6::uuid end)`,
        [id, company, randomUUID(), randomUUID(), key, randomUUID(), removedDaysAgo],
      );
      return { id, key };
    };
    const stored = async (key: string) => {
      const body = await storage.inner.get(key);
      if (!body) return false;
      body.resume();
      return true;
    };
    const row = async (id: string) =>
      (await pool.query<{ deleted_at: Date | null; purged_at: Date | null }>('select deleted_at, purged_at from files where id = $1', [id]))
        .rows[0]!;

    it('deletes the bytes of a file removed longer than the retention ago and marks it purged; keeps a newer removed one and a live one', async () => {
      const old = await seed(RETENTION_DAYS + 1);
      const recent = await seed(RETENTION_DAYS - 1);
      const live = await seed(null);
      expect(await stored(old.key)).to.equal(true);

      expect(await purger().purge()).to.equal(1);

      expect(await stored(old.key)).to.equal(false);
      expect(await stored(recent.key)).to.equal(true);
      expect(await stored(live.key)).to.equal(true);
      const purged = await row(old.id);
      expect(purged.purged_at).to.be.instanceOf(Date);
      expect(purged.deleted_at).to.be.instanceOf(Date); // the row stays, still removed
      expect((await row(recent.id)).purged_at).to.equal(null);
      expect((await row(live.id)).purged_at).to.equal(null);
      expect([...storage.deletes.keys()]).to.deep.equal([old.key]);
      // A second pass finds nothing due.
      expect(await purger().purge()).to.equal(0);
      expect(storage.deletes.get(old.key)).to.equal(1);
    });

    it('drains a queue larger than a batch, oldest removal first', async () => {
      const files = [];
      for (let i = 0; i < 12; i++) files.push(await seed(RETENTION_DAYS + 1 + i));
      const p = purger(5);
      expect(await p.purgeBatch()).to.equal(5);
      // The five removed longest ago went first.
      const firstFive = files.slice(-5).map((f) => f.key);
      expect([...storage.deletes.keys()].sort()).to.deep.equal(firstFive.sort());
      expect(await p.purge()).to.equal(7);
      for (const f of files) expect(await stored(f.key)).to.equal(false);
    });

    it('two purgers at once share the queue: no error, every due file purged exactly once', async () => {
      const files = [];
      for (let i = 0; i < 40; i++) files.push(await seed(RETENTION_DAYS + 1 + (i % 5)));
      const other = new pg.Pool({ connectionString: db.url, options: '-c search_path=files', max: 2 });
      try {
        const counts = await Promise.all([purger(3).purge(), purger(3, other).purge(), purger(4).purge()]);
        expect(counts.reduce((a, b) => a + b, 0)).to.equal(40);
      } finally {
        await other.end();
      }
      for (const f of files) {
        expect(storage.deletes.get(f.key), f.key).to.equal(1);
        expect(await stored(f.key)).to.equal(false);
        expect((await row(f.id)).purged_at).to.be.instanceOf(Date);
      }
    });

    it('a deletion the storage refuses fails the pass; the others of its batch are marked, it is purged by a later pass', async () => {
      const [a, b, c] = [await seed(RETENTION_DAYS + 3), await seed(RETENTION_DAYS + 2), await seed(RETENTION_DAYS + 1)];
      storage.failing.add(b.key);
      let error: unknown;
      await purger()
        .purge()
        .catch((err) => (error = err));
      expect(String(error)).to.contain('storage refused');
      expect((await row(a.id)).purged_at).to.be.instanceOf(Date);
      expect((await row(c.id)).purged_at).to.be.instanceOf(Date);
      expect((await row(b.id)).purged_at).to.equal(null);
      expect(await stored(b.key)).to.equal(true);
      storage.failing.clear();
      expect(await purger().purge()).to.equal(1);
      expect(await stored(b.key)).to.equal(false);
    });
  });
}

describe('the files service runs the purge as its worker (decision 0136)', function () {
  this.timeout(120_000);
  let db: TestDatabase | undefined;
  let service: RunningService | undefined;
  let dir: string;

  after(async () => {
    await service?.stop();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('purges a file removed before the configured retention within an interval, and leaves a newer one', async () => {
    dir = await mkdtemp(join(tmpdir(), 'files-purge-worker-'));
    const t = await serviceTestEnv({
      CRM_GRPC_URL: '127.0.0.1:1',
      FILES_LOCAL_DIR: dir,
      FILES_PURGE_INTERVAL_MS: '100',
      FILES_PURGE_AFTER_DAYS: '7',
    });
    db = t.db;
    service = (await startService(filesService, t.env)) as RunningService;
    const storage = (service.deps as { storage: FileStorage }).storage;
    const c = new pg.Client({ connectionString: db.url, options: '-c search_path=files' });
    await c.connect();
    try {
      const insert = async (days: number) => {
        const id = randomUUID();
        const key = `${randomUUID()}/${id}`;
        await storage.put(key, Readable.from([Buffer.from('x')]));
        await c.query(
          `insert into files (id, company_id, crm_deal_id, batch_id, file_name, mime_type, file_size, storage_key, created_by_id, created_at,
              deleted_at, deleted_by_id)
            values ($1, $2, $2, $2, 'x', 'text/plain', 1, $3, $2, now(), now() - make_interval(days => $4::int), $2)`,
          [id, randomUUID(), key, days],
        );
        return { id, key };
      };
      const old = await insert(8);
      const recent = await insert(6);
      await eventually(async () => (await storage.get(old.key)) === null, 10_000);
      const { rows } = await c.query('select id from files where purged_at is not null');
      expect(rows.map((r) => r.id)).to.deep.equal([old.id]);
      const kept = await storage.get(recent.key);
      expect(kept).to.not.equal(null);
      kept?.resume();
    } finally {
      await c.end();
    }
  });
});
