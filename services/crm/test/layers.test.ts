import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

/** Every relative import of crm's sources, as `[from, to]` paths under src. */
function imports(): [string, string][] {
  const edges: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
          const target = normalize(join(dirname(path), (m[1] as string).replace(/\.js$/, '.ts')));
          edges.push([relative(SRC, path), relative(SRC, target)]);
        }
      }
    }
  };
  walk(SRC);
  return edges;
}

const folder = (path: string) => (path.includes('/') ? (path.split('/')[0] as string) : '');

/** Decision 0091: sales, then leads, then deals; marketing and the catalogs below them all. */
const BELOW: Record<string, string[]> = {
  sales: ['leads', 'deals'],
  leads: ['deals'],
  marketing: ['sales', 'leads', 'deals'],
  catalog: ['sales', 'leads', 'deals'],
  contacts: ['sales', 'leads', 'deals'],
  pipelines: ['sales', 'leads', 'deals'],
  companies: ['sales', 'leads', 'deals', 'marketing'],
};

describe("crm's import graph (decision 0091)", () => {
  const edges = imports();

  it('has no import running back up the layers of the sales core', () => {
    const back = edges.filter(([from, to]) => (BELOW[folder(from)] ?? []).includes(folder(to))).map(([from, to]) => `${from} -> ${to}`);
    expect(back).to.deep.equal([]);
  });

  it('has no cycle between folders: no folder reaches itself through the folders it imports', () => {
    const next = new Map<string, Set<string>>();
    for (const [from, to] of edges) {
      const [a, b] = [folder(from), folder(to)];
      // Files at the root of src (service.ts, db.ts) wire the folders together: they sit above all of them.
      if (a && b && a !== b) next.set(a, new Set([...(next.get(a) ?? []), b]));
    }
    const cycles = new Set<string>();
    const visit = (name: string, path: string[]) => {
      if (path.includes(name)) {
        const loop = [...path.slice(path.indexOf(name)), name];
        // One name per cycle, whichever folder the walk entered it by.
        const start = loop.slice(0, -1).sort()[0] as string;
        const at = loop.indexOf(start);
        cycles.add([...loop.slice(at, -1), ...loop.slice(0, at), start].join(' -> '));
        return;
      }
      for (const to of next.get(name) ?? []) visit(to, [...path, name]);
    };
    for (const name of next.keys()) visit(name, []);
    expect([...cycles]).to.deep.equal([]);
  });

  it('has no cycle between files', () => {
    const next = new Map<string, string[]>();
    for (const [from, to] of edges) next.set(from, [...(next.get(from) ?? []), to]);
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const to of next.get(file) ?? []) visit(to, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of next.keys()) visit(file, []);
    expect(cycles).to.deep.equal([]);
  });
});
