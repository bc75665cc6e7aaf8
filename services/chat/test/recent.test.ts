import { expect } from 'chai';
import { Recent } from '../src/people/recent.js';

describe('Recent: answers kept for a while (the sender summary of decision 0239)', () => {
  let now = 0;
  let loads = 0;
  const answer = (v: string) => () => {
    loads++;
    return Promise.resolve(v);
  };
  beforeEach(() => {
    now = 1_000;
    loads = 0;
  });

  it('answers a key from the first load until ttlMs have passed, then loads it again', async () => {
    const r = new Recent<string>(2000, 100, () => now);
    expect(await r.get('a', answer('one'))).to.equal('one');
    now += 1999;
    expect(await r.get('a', answer('two'))).to.equal('one');
    now += 1;
    expect(await r.get('a', answer('three'))).to.equal('three');
    expect(await r.get('b', answer('four'))).to.equal('four');
    expect(loads).to.equal(3);
  });

  it('keeps no failed answer: the next call loads again', async () => {
    const r = new Recent<string>(2000, 100, () => now);
    const failed = r.get('a', () => Promise.reject(new Error('crm down')));
    await failed.catch(() => undefined);
    await Promise.resolve();
    expect(await r.get('a', answer('back'))).to.equal('back');
    expect(loads).to.equal(1);
  });

  it('drops every key when full, so it never holds more than max', async () => {
    const r = new Recent<string>(2000, 2, () => now);
    await r.get('a', answer('a'));
    await r.get('b', answer('b'));
    await r.get('c', answer('c'));
    await r.get('a', answer('a again'));
    expect(loads).to.equal(4);
  });
});
