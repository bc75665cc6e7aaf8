import { fileURLToPath } from 'node:url';
import { fileCycles, folderCycles, queriesOutsideStores } from '@svc/platform/testing-architecture';
import { expect } from 'chai';

const src = fileURLToPath(new URL('../src', import.meta.url));

/** The inner shape of decision 0201: stores alone reach Postgres, and no folder or file imports itself through others. */
describe('chat service architecture', () => {
  it('has no cycle between folders', () => {
    expect(folderCycles(src)).to.deep.equal([]);
  });

  it('has no cycle between files', () => {
    expect(fileCycles(src)).to.deep.equal([]);
  });

  it('reaches Postgres from its stores only', () => {
    expect(queriesOutsideStores(src)).to.deep.equal([]);
  });
});
