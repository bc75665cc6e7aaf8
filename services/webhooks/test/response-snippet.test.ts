import { expect } from 'chai';
import { responseSnippet } from '../src/deliveries/sender.js';

describe('the response snippet of the delivery log', () => {
  it('keeps the first 1 KB of the answer as text, whatever the chunks', () => {
    expect(responseSnippet([Buffer.from('a'.repeat(1000)), Buffer.from('b'.repeat(1000))])).to.equal(
      `${'a'.repeat(1000)}${'b'.repeat(24)}`,
    );
    expect(responseSnippet([])).to.equal(null);
  });
  it('ends a character cut at the limit with U+FFFD and drops NULs, which Postgres text refuses', () => {
    expect(responseSnippet([Buffer.from(`${'a'.repeat(1023)}é`)])).to.equal(`${'a'.repeat(1023)}\uFFFD`);
    expect(responseSnippet([Buffer.from('x\u0000y')])).to.equal('xy');
  });
});
