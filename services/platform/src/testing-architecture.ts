import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Checks of a service's inner shape, shared by every service's `architecture.test.ts` (decision 0201):
 * no cycle between folders or files, and no file outside a store that reaches Postgres.
 */

export interface SourceFile {
  /** Path under src, with forward slashes. */
  path: string;
  text: string;
}

/** Every `.ts` file under `src`. */
export function sourceFiles(src: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts'))
        files.push({ path: relative(src, path).split('\\').join('/'), text: readFileSync(path, 'utf8') });
    }
  };
  walk(src);
  return files;
}

/** Every relative import (static, dynamic or type-only) as `[from, to]` paths under src. */
export function importEdges(src: string): [string, string][] {
  const edges: [string, string][] = [];
  for (const file of sourceFiles(src)) {
    for (const m of file.text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
      const target = normalize(join(dirname(file.path), (m[1] as string).replace(/\.js$/, '.ts')))
        .split('\\')
        .join('/');
      edges.push([file.path, target]);
    }
  }
  return edges;
}

/** The top folder of a path under src; '' for the files at its root (they wire the folders together). */
export const folderOf = (path: string) => (path.includes('/') ? (path.split('/')[0] as string) : '');

/** The strongly connected groups of a directed graph with more than one node: each a cycle, named by its sorted nodes. */
function cycles(next: Map<string, Set<string>>): string[] {
  // Tarjan's algorithm.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const connect = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node) as number, low.get(to) as number));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) as number, index.get(to) as number));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort().join(' <-> '));
    }
  };
  for (const node of next.keys()) if (!index.has(node)) connect(node);
  return found.sort();
}

/**
 * Cycles between the top folders of src: `['chats <-> messages']`, or none. Root files wire the folders together
 * and are left out, unless `rootFiles` is set: then each is a node of its own (`['http <-> logging.ts']`), for a
 * src whose root files are also imported by its folders (the platform).
 */
export function folderCycles(src: string, o: { rootFiles?: boolean } = {}): string[] {
  const nodeOf = (path: string) => folderOf(path) || (o.rootFiles ? path : '');
  const next = new Map<string, Set<string>>();
  for (const [from, to] of importEdges(src)) {
    const [a, b] = [nodeOf(from), nodeOf(to)];
    if (a && b && a !== b) next.set(a, new Set([...(next.get(a) ?? []), b]));
  }
  return cycles(next);
}

/** Cycles between files of src. */
export function fileCycles(src: string): string[] {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of importEdges(src)) next.set(from, new Set([...(next.get(from) ?? []), to]));
  return cycles(next);
}

/**
 * What reaches Postgres: the driver or the ORM's runtime (an entity definition's `defineEntity`/`p` aside), a
 * query on a pool or client, a named statement, or the entity manager.
 */
const DATABASE_TOUCH: [string, RegExp][] = [
  ['imports pg', /^import (?!type )[^;]*from 'pg'/m],
  ['imports the ORM', /^import (?!type )[^;]*from '@mikro-orm\/(?!core'|core\/)[^']*'/m],
  [
    'uses the entity manager',
    /\bem\.(find|findOne|findOneOrFail|count|persist|flush|remove|fork|transactional|create|assign|nativeUpdate|nativeDelete|insert|upsert|getConnection|execute|getReference)\b|getEntityManager\(|\.em\.fork\(/,
  ],
  ['runs a query', /\.query(<[^>]*>)?\(/],
  // Not a method: `storage.run(value, work)` of an AsyncLocalStorage is no statement.
  ['runs a named statement', /(?<![.\w])run(<[^>]*>)?\(\s*\w+\s*,\s*\w+/],
  ['reaches the pool', /\bnativePool\(/],
];

/** A store, a definition of the schema, or the wiring of a service: the files allowed to reach Postgres. */
export const isStoreOrSchema = (path: string) =>
  /\.store\.ts$/.test(path) ||
  /\.entity\.ts$/.test(path) ||
  /(^|\/)migrations\//.test(path) ||
  /^(db|migrate|replay|entities)\.ts$/.test(path);

/** Files outside the stores that reach Postgres, each with how: `['chats/chat.grpc.ts: runs a query']`, or none. */
export function queriesOutsideStores(src: string, allowed: (path: string) => boolean = isStoreOrSchema): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(src)) {
    if (allowed(file.path)) continue;
    const code = file.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const [how, pattern] of DATABASE_TOUCH) if (pattern.test(code)) found.push(`${file.path}: ${how}`);
  }
  return found;
}

/** What a service's architecture test asserts empty: its folder cycles, file cycles and queries outside stores. */
export function shapeProblems(src: string | URL, o: { rootFiles?: boolean; allowed?: (path: string) => boolean } = {}) {
  const dir = typeof src === 'string' ? src : fileURLToPath(src);
  return {
    folderCycles: folderCycles(dir, { rootFiles: o.rootFiles }),
    fileCycles: fileCycles(dir),
    queriesOutsideStores: queriesOutsideStores(dir, o.allowed),
  };
}

/** The value of shapeProblems for a service in the shape of decision 0201. */
export const NO_SHAPE_PROBLEMS = { folderCycles: [], fileCycles: [], queriesOutsideStores: [] };
