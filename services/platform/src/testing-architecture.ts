import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Checks shared by every service's `architecture.test.ts` (decision 0201). */

export interface SourceFile {
  /** Forward slashes. */
  path: string;
  text: string;
}

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

/** Static, dynamic or type-only. */
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

/** '' for root files (they wire the folders together). */
export const folderOf = (path: string) => (path.includes('/') ? (path.split('/')[0] as string) : '');

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

/** Root files are left out unless `rootFiles`: then each is a node (for the platform, whose folders import them). */
export function folderCycles(src: string, o: { rootFiles?: boolean } = {}): string[] {
  const nodeOf = (path: string) => folderOf(path) || (o.rootFiles ? path : '');
  const next = new Map<string, Set<string>>();
  for (const [from, to] of importEdges(src)) {
    const [a, b] = [nodeOf(from), nodeOf(to)];
    if (a && b && a !== b) next.set(a, new Set([...(next.get(a) ?? []), b]));
  }
  return cycles(next);
}

export function fileCycles(src: string): string[] {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of importEdges(src)) next.set(from, new Set([...(next.get(from) ?? []), to]));
  return cycles(next);
}

const DATABASE_TOUCH: [string, RegExp][] = [
  ['imports pg', /^import (?!type )[^;]*from 'pg'/m],
  ['imports the ORM', /^import (?!type )[^;]*from '@mikro-orm\/(?!core'|core\/)[^']*'/m],
  [
    'uses the entity manager',
    /\bem\.(find|findOne|findOneOrFail|count|persist|flush|remove|fork|transactional|create|assign|nativeUpdate|nativeDelete|insert|upsert|getConnection|execute|getReference)\b|getEntityManager\(|\.em\.fork\(/,
  ],
  ['runs a query', /\.query(<[^>]*>)?\(/],
  // `storage.run(value, work)` of an AsyncLocalStorage is no statement.
  ['runs a named statement', /(?<![.\w])run(<[^>]*>)?\(\s*\w+\s*,\s*\w+/],
  ['reaches the pool', /\bnativePool\(/],
];

export const isStoreOrSchema = (path: string) =>
  /\.store\.ts$/.test(path) ||
  /\.entity\.ts$/.test(path) ||
  /(^|\/)migrations\//.test(path) ||
  /^(db|migrate|replay|entities)\.ts$/.test(path);

/** `['chats/chat.grpc.ts: runs a query']`, or none. */
export function queriesOutsideStores(src: string, allowed: (path: string) => boolean = isStoreOrSchema): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(src)) {
    if (allowed(file.path)) continue;
    const code = file.text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    for (const [how, pattern] of DATABASE_TOUCH) if (pattern.test(code)) found.push(`${file.path}: ${how}`);
  }
  return found;
}

export function shapeProblems(src: string | URL, o: { rootFiles?: boolean; allowed?: (path: string) => boolean } = {}) {
  const dir = typeof src === 'string' ? src : fileURLToPath(src);
  return {
    folderCycles: folderCycles(dir, { rootFiles: o.rootFiles }),
    fileCycles: fileCycles(dir),
    queriesOutsideStores: queriesOutsideStores(dir, o.allowed),
  };
}

export const NO_SHAPE_PROBLEMS = { folderCycles: [], fileCycles: [], queriesOutsideStores: [] };
