import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { folderOf, importEdges, NO_SHAPE_PROBLEMS, shapeProblems } from '@svc/platform/testing-architecture';
import { expect } from 'chai';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

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

describe("crm's inner shape (decisions 0091, 0201)", () => {
  it('has no import running back up the layers of the sales core', () => {
    const back = importEdges(SRC)
      .filter(([from, to]) => (BELOW[folderOf(from)] ?? []).includes(folderOf(to)))
      .map(([from, to]) => `${from} -> ${to}`);
    expect(back).to.deep.equal([]);
  });

  it('has no cycle between folders or files, and reaches Postgres only from its stores, entities, migrations and db.ts', () => {
    expect(shapeProblems(SRC)).to.deep.equal(NO_SHAPE_PROBLEMS);
  });
});
