import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileCycles, folderCycles, queriesOutsideStores } from '@svc/platform/testing-architecture';
import { expect } from 'chai';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

describe("the gateway's shape (decision 0201)", () => {
  it('has no cycle between its folders and root files', () => {
    expect(folderCycles(SRC, { rootFiles: true })).to.deep.equal([]);
  });

  it('has no cycle between files', () => {
    expect(fileCycles(SRC)).to.deep.equal([]);
  });

  it('never reaches Postgres: it has no database', () => {
    expect(queriesOutsideStores(SRC, () => false)).to.deep.equal([]);
  });
});
