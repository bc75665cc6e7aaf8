/**
 * Two V8 heap snapshots of one process compared by constructor (DevTools' "Comparison" view, in text): how many
 * objects of each and their self size, then, for the groups that grew most, what holds the objects allocated
 * between the snapshots (V8 keeps an object's id across snapshots of one process, so "new" is exact).
 */
import { readFileSync } from 'node:fs';

interface Raw {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface Heap {
  raw: Raw;
  /** Number of nodes, and the offset of each field in a node's row. */
  count: number;
  nf: number;
  ef: number;
  at: { type: number; name: number; id: number; size: number; edges: number };
  eat: { type: number; name: number; to: number };
  nodeTypes: string[];
  edgeTypes: string[];
  /** The first edge of each node (edges are stored node after node). */
  firstEdge: Uint32Array;
}

export function readHeap(file: string): Heap {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Raw;
  const m = raw.snapshot.meta;
  const nf = m.node_fields.length;
  const ef = m.edge_fields.length;
  const at = {
    type: m.node_fields.indexOf('type'),
    name: m.node_fields.indexOf('name'),
    id: m.node_fields.indexOf('id'),
    size: m.node_fields.indexOf('self_size'),
    edges: m.node_fields.indexOf('edge_count'),
  };
  const eat = { type: m.edge_fields.indexOf('type'), name: m.edge_fields.indexOf('name_or_index'), to: m.edge_fields.indexOf('to_node') };
  const count = raw.nodes.length / nf;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += raw.nodes[i * nf + at.edges]! * ef;
    firstEdge[i + 1] = e;
  }
  return { raw, count, nf, ef, at, eat, nodeTypes: m.node_types[0], edgeTypes: m.edge_types[0], firstEdge };
}

/** The group DevTools shows a node under: the constructor of an object, `(string)`, `(closure)`, `(array)`... */
export function groupOf(h: Heap, i: number): string {
  const type = h.nodeTypes[h.raw.nodes[i * h.nf + h.at.type]!]!;
  if (type === 'object' || type === 'native') return h.raw.strings[h.raw.nodes[i * h.nf + h.at.name]!]!;
  return `(${type})`;
}

const sizeOf = (h: Heap, i: number) => h.raw.nodes[i * h.nf + h.at.size]!;
const idOf = (h: Heap, i: number) => h.raw.nodes[i * h.nf + h.at.id]!;

export interface GroupGrowth {
  group: string;
  count: [number, number];
  bytes: [number, number];
}

export function byGroup(h: Heap): Map<string, { count: number; bytes: number }> {
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < h.count; i++) {
    const g = groupOf(h, i);
    const s = out.get(g) ?? { count: 0, bytes: 0 };
    s.count++;
    s.bytes += sizeOf(h, i);
    out.set(g, s);
  }
  return out;
}

/** Groups by growth of their self size, largest first. */
export function compare(a: Heap, b: Heap): GroupGrowth[] {
  const before = byGroup(a);
  const after = byGroup(b);
  const groups = new Set([...before.keys(), ...after.keys()]);
  return [...groups]
    .map((group) => {
      const x = before.get(group) ?? { count: 0, bytes: 0 };
      const y = after.get(group) ?? { count: 0, bytes: 0 };
      return { group, count: [x.count, y.count] as [number, number], bytes: [x.bytes, y.bytes] as [number, number] };
    })
    .sort((p, q) => q.bytes[1] - q.bytes[0] - (p.bytes[1] - p.bytes[0]));
}

/**
 * The retainer of each node on a shortest path from the root (breadth first over strong edges): the chain DevTools
 * shows first. -1 for the root and for what only weak edges reach.
 */
function shortestRetainers(h: Heap): { parent: Int32Array; via: Int32Array } {
  const parent = new Int32Array(h.count).fill(-1);
  const via = new Int32Array(h.count).fill(-1);
  const weak = h.edgeTypes.indexOf('weak');
  const seen = new Uint8Array(h.count);
  const queue = new Uint32Array(h.count);
  let head = 0;
  let tail = 0;
  queue[tail++] = 0;
  seen[0] = 1;
  const { edges } = h.raw;
  while (head < tail) {
    const i = queue[head++]!;
    for (let e = h.firstEdge[i]!; e < h.firstEdge[i + 1]!; e += h.ef) {
      if (edges[e + h.eat.type] === weak) continue;
      const to = edges[e + h.eat.to]! / h.nf;
      if (seen[to]) continue;
      seen[to] = 1;
      parent[to] = i;
      via[to] = e;
      queue[tail++] = to;
    }
  }
  return { parent, via };
}

function edgeName(h: Heap, e: number): string {
  const type = h.edgeTypes[h.raw.edges[e + h.eat.type]!];
  const n = h.raw.edges[e + h.eat.name]!;
  // Indexes are left out: the elements of one array are one holder.
  if (type === 'element' || type === 'hidden') return '[]';
  return `.${h.raw.strings[n]}`;
}

const STRING_PARTS = new Set(['(concatenated string)', '(sliced string)', '(string)']);

/** Where a node hangs: up to `depth` steps of its shortest retaining path, nearest first; the parts of a string are one step. */
function pathOf(h: Heap, r: { parent: Int32Array; via: Int32Array }, i: number, depth: number): string {
  const steps: string[] = [];
  let n = i;
  while (r.parent[n]! > 0 && STRING_PARTS.has(groupOf(h, r.parent[n]!))) n = r.parent[n]!;
  for (let d = 0; d < depth && r.parent[n]! > 0; d++) {
    const p = r.parent[n]!;
    steps.push(`${groupOf(h, p)}${edgeName(h, r.via[n]!)}`);
    n = p;
  }
  return steps.join(' ← ') || '(root)';
}

export interface Holder {
  path: string;
  count: number;
  bytes: number;
}

/**
 * For each of `groups`, the objects of `b` that `a` did not have, summed by their retaining path (`depth` steps):
 * what keeps the new objects alive.
 */
export function newObjectHolders(a: Heap, b: Heap, groups: string[], depth = 5, top = 3): Map<string, Holder[]> {
  const old = new Set<number>();
  for (let i = 0; i < a.count; i++) old.add(idOf(a, i));
  const wanted = new Set(groups);
  const r = shortestRetainers(b);
  const paths = new Map<string, Map<string, Holder>>(groups.map((g) => [g, new Map()]));
  for (let i = 0; i < b.count; i++) {
    if (old.has(idOf(b, i))) continue;
    const g = groupOf(b, i);
    if (!wanted.has(g)) continue;
    const p = pathOf(b, r, i, depth);
    const m = paths.get(g)!;
    const s = m.get(p) ?? { path: p, count: 0, bytes: 0 };
    s.count++;
    s.bytes += sizeOf(b, i);
    m.set(p, s);
  }
  return new Map([...paths].map(([g, m]) => [g, [...m.values()].sort((x, y) => y.bytes - x.bytes).slice(0, top)]));
}
