import { randomUUID } from 'node:crypto';
import { EXTERNAL_RESOURCES } from '@svc/gateway';
import { expect } from 'chai';
import { ROUTES, shapeOf } from './route-table.js';
import { type World, world } from './support/world.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The generated tests cover what the route table lists, so the table must list every route the gateway serves:
 * each resource the gateway forwards is probed with every method on its collection and on an item, and any answer
 * other than the service's "Cannot METHOD path" 404 is a served route that must have its row.
 */
describe('reliability: the route table lists every external route the gateway serves', () => {
  let w: World;
  before(async function () {
    this.timeout(180_000);
    w = await world();
  });

  it('has a row for every served method and shape of every resource', async () => {
    const unlisted: string[] = [];
    const served: string[] = [];
    for (const resource of Object.keys(EXTERNAL_RESOURCES)) {
      for (const shape of ['collection', 'item'] as const) {
        for (const method of METHODS) {
          const path = `/integrations/external/${resource}${shape === 'item' ? `/${randomUUID()}` : ''}`;
          const res = await w.call(method, path, { token: w.own.key, body: method === 'GET' || method === 'DELETE' ? undefined : {} });
          expect(res.status, `${method} ${path}: ${res.text}`).to.be.below(500);
          if (res.status === 404 && /^Cannot /.test(res.body?.message ?? '')) continue;
          served.push(`${method} /${resource} (${shape})`);
          const listed = ROUTES.some((r) => r.method === method && r.path.split('/')[1] === resource && shapeOf(r.path) === shape);
          if (!listed) unlisted.push(`${method} /${resource} (${shape}): ${res.status}`);
        }
      }
    }
    expect(unlisted, 'served routes without a row in test/reliability/route-table.ts').to.deep.equal([]);
    // And the table lists nothing the gateway does not serve (a stale row would test nothing).
    for (const r of ROUTES)
      expect(served, `row ${r.method} ${r.path}`).to.include(`${r.method} /${r.path.split('/')[1]} (${shapeOf(r.path)})`);
  });
});
