/**
 * `npm run migration:create -w services/<name>`: review the file, add it to the migrations list, commit it with the
 * snapshot.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from './orm.js';

const cwd = process.cwd();
const { dbDefinition } = (await import(pathToFileURL(resolve(cwd, 'src/db.ts')).href)) as {
  dbDefinition: { schema: string; entities: unknown[]; migrations: unknown[] };
};
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const orm = await MikroORM.init({
  ...ormConfig({
    url,
    schema: dbDefinition.schema,
    entities: dbDefinition.entities as never,
    migrations: dbDefinition.migrations as never,
    migrationsPath: resolve(cwd, 'src/migrations'),
  }),
});
const initial = process.argv.includes('--initial');
const result = await orm.migrator.create(resolve(cwd, 'src/migrations'), false, initial, process.argv[3]);
if (result.fileName) {
  const dir = resolve(cwd, 'src/migrations');
  const file = resolve(dir, result.fileName);
  // MikroORM emits the outbox's partial index without its predicate; the relay's claim query needs it.
  const sql = readFileSync(file, 'utf8').replace(
    /(create index "outbox_unpublished_idx" on "[a-z_]+"\."outbox" \("id"\));/,
    '$1 where "published_at" is null;',
  );
  writeFileSync(file, sql);
  const cls = result.fileName.replace(/\.ts$/, '');
  const index = readFileSync(resolve(dir, 'index.ts'), 'utf8')
    .replace(/(import type \{ Migration \} from '@mikro-orm\/migrations';\n)/, `$1import { ${cls} } from './${cls}.js';\n`)
    .replace(/= \[(.*)\];/, (_m, list: string) => `= [${list ? `${list}, ` : ''}${cls}];`);
  writeFileSync(resolve(dir, 'index.ts'), index);
  console.log(`wrote ${result.fileName} and listed it in src/migrations/index.ts; review both`);
} else {
  console.log('no changes');
}
await orm.close(true);
