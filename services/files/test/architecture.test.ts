import { NO_SHAPE_PROBLEMS, shapeProblems } from '@svc/platform/testing-architecture';
import { expect } from 'chai';

describe('files: inner shape (decision 0201)', () => {
  it('has no cycle between folders or files, and reaches Postgres only from its stores, entities, migrations and db.ts', () => {
    expect(shapeProblems(new URL('../src', import.meta.url))).to.deep.equal(NO_SHAPE_PROBLEMS);
  });
});
