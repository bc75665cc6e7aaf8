import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileCycles, folderCycles, queriesOutsideStores } from '@svc/platform/testing-architecture';
import { expect } from 'chai';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

/** The service's inner shape (decision 0201): stores alone reach Postgres, and no folder or file imports itself. */
describe('architecture', () => {
  it('has no cycle between folders', () => {
    expect(folderCycles(SRC)).to.deep.equal([]);
  });

  it('has no cycle between files', () => {
    expect(fileCycles(SRC)).to.deep.equal([]);
  });

  it('reaches Postgres only from stores, entities, migrations and the db wiring', () => {
    expect(queriesOutsideStores(SRC)).to.deep.equal([]);
  });
});
