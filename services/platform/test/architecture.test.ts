import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import {
  fileCycles,
  folderCycles,
  isStoreOrSchema,
  NO_SHAPE_PROBLEMS,
  queriesOutsideStores,
  shapeProblems,
} from '../src/testing-architecture.js';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

/**
 * The platform's store layer: the outbox's store and entity, the `db/` folder (the pool, the ORM, the named
 * statements every store is built on: what a service's `db.ts` wiring is to it) and the test helpers that create
 * databases.
 */
const platformStores = (path: string) => isStoreOrSchema(path) || path.startsWith('db/') || /^testing[\w-]*\.ts$/.test(path);

/** A src tree in a temporary folder, from `{path: text}`; removed after the test. */
function tree(files: Record<string, string>): string {
  const src = mkdtempSync(join(tmpdir(), 'architecture-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  trees.push(src);
  return src;
}
const trees: string[] = [];

describe('the shared architecture checks (decision 0201)', () => {
  after(() => {
    for (const src of trees) rmSync(src, { recursive: true, force: true });
  });

  describe('folderCycles', () => {
    it('finds two folders importing each other, whatever the import form', () => {
      const src = tree({
        'chats/chat.service.ts': "import { send } from '../messages/message.service.js';\n",
        'messages/message.service.ts': "import type { Chat } from '../chats/chat.entity.js';\n",
        'chats/chat.entity.ts': 'export interface Chat {}\n',
      });
      expect(folderCycles(src)).to.deep.equal(['chats <-> messages']);
    });

    it('finds a cycle through three folders, named once', () => {
      const src = tree({
        'a/a.ts': "export const a = () => import('../b/b.js');\n",
        'b/b.ts': "import { c } from '../c/c.js';\n",
        'c/c.ts': "import { a } from '../a/a.js';\n",
      });
      expect(folderCycles(src)).to.deep.equal(['a <-> b <-> c']);
    });

    it('finds none when the imports run one way, and leaves out the root files that wire the folders', () => {
      const src = tree({
        'service.ts': "import { chats } from './chats/chat.http.js';\n",
        'chats/chat.http.ts': "import { send } from '../messages/message.service.js';\nimport type { Def } from '../service.js';\n",
        'messages/message.service.ts': "import { log } from '../logging.js';\n",
        'logging.ts': 'export const log = 1;\n',
      });
      expect(folderCycles(src)).to.deep.equal([]);
    });

    it('with rootFiles, finds a root file and a folder importing each other', () => {
      const src = tree({
        'logging.ts': "import { id } from './http/request-id.js';\n",
        'http/request-id.ts': 'export const id = 1;\n',
        'http/app.ts': "import { log } from '../logging.js';\n",
      });
      expect(folderCycles(src)).to.deep.equal([]);
      expect(folderCycles(src, { rootFiles: true })).to.deep.equal(['http <-> logging.ts']);
    });
  });

  describe('fileCycles', () => {
    it('finds files importing each other, in folders or not', () => {
      const src = tree({
        'tasks/task.service.ts': "import { next } from './task.recurrence.js';\n",
        'tasks/task.recurrence.ts': "import { create } from './task.service.js';\n",
        'a.ts': "import { b } from './b.js';\n",
        'b.ts': "export { a } from './a.js';\n",
      });
      expect(fileCycles(src)).to.deep.equal(['a.ts <-> b.ts', 'tasks/task.recurrence.ts <-> tasks/task.service.ts']);
    });

    it('finds none in a tree of one-way imports', () => {
      const src = tree({
        'tasks/task.service.ts': "import { next } from './task.recurrence.js';\nimport { x } from '../x.js';\n",
        'tasks/task.recurrence.ts': "import { x } from '../x.js';\n",
        'x.ts': 'export const x = 1;\n',
      });
      expect(fileCycles(src)).to.deep.equal([]);
    });
  });

  describe('queriesOutsideStores', () => {
    it('finds each way a file outside a store reaches Postgres', () => {
      const src = tree({
        'chats/chat.grpc.ts': "import pg from 'pg';\nexport const f = (pool: pg.Pool) => pool.query('select 1');\n",
        'chats/chat.service.ts': "import { run } from '@svc/platform/db/native';\nexport const g = (db, st) => run(db, st, []);\n",
        'chats/chat.http.ts': 'export const h = (ctx) => ctx.orm.em.fork().find(Chat, {});\n',
        'chats/chat.rules.ts': "import { MikroORM } from '@mikro-orm/postgresql';\nexport const p = (orm) => nativePool(orm);\n",
      });
      expect(queriesOutsideStores(src)).to.deep.equal([
        'chats/chat.grpc.ts: imports pg',
        'chats/chat.grpc.ts: runs a query',
        'chats/chat.http.ts: uses the entity manager',
        'chats/chat.rules.ts: imports the ORM',
        'chats/chat.rules.ts: reaches the pool',
        'chats/chat.service.ts: runs a named statement',
      ]);
    });

    it('allows stores, entities, migrations and the wiring of db.ts', () => {
      const src = tree({
        'chats/chat.store.ts': "import pg from 'pg';\nexport const f = (db: pg.Pool) => db.query('select 1');\n",
        'chats/chat.entity.ts':
          "import { defineEntity, p } from '@mikro-orm/core';\nexport const Chat = defineEntity({ name: 'Chat', properties: {} });\n",
        'migrations/Migration1.ts': "import { Migration } from '@mikro-orm/migrations';\nexport class M extends Migration {}\n",
        'db.ts': "import { MikroORM } from '@mikro-orm/postgresql';\n",
      });
      expect(queriesOutsideStores(src)).to.deep.equal([]);
    });

    it('allows type-only imports of pg and the ORM, AsyncLocalStorage.run, and words in comments', () => {
      const src = tree({
        'chats/chat.service.ts': [
          "import type { PoolClient } from 'pg';",
          "import type { EntityManager } from '@mikro-orm/postgresql';",
          "import { AsyncLocalStorage } from 'node:async_hooks';",
          'const storage = new AsyncLocalStorage<string>();',
          '// not pool.query(...) here: the store does it',
          'export const f = (id: string, work: () => void) => storage.run(id, work);',
        ].join('\n'),
      });
      expect(queriesOutsideStores(src)).to.deep.equal([]);
    });

    it('takes the set of allowed files from its caller', () => {
      const src = tree({ 'db/pool.ts': "import pg from 'pg';\n", 'events/relay.ts': "import pg from 'pg';\n" });
      expect(queriesOutsideStores(src, (path) => path.startsWith('db/'))).to.deep.equal(['events/relay.ts: imports pg']);
    });
  });
});

describe("the platform's own shape", () => {
  it('has no cycle between its folders, root files or files; reaches Postgres only from db/, the outbox store and entity, the test helpers', () => {
    expect(shapeProblems(SRC, { rootFiles: true, allowed: platformStores })).to.deep.equal(NO_SHAPE_PROBLEMS);
  });
});
