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
