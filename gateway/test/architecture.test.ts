import { NO_SHAPE_PROBLEMS, shapeProblems } from '@svc/platform/testing-architecture';
import { expect } from 'chai';

describe("the gateway's shape (decision 0201)", () => {
  it('has no cycle between its folders, root files or files, and never reaches Postgres: it has no database', () => {
    expect(shapeProblems(new URL('../src', import.meta.url), { rootFiles: true, allowed: () => false })).to.deep.equal(NO_SHAPE_PROBLEMS);
  });
});
