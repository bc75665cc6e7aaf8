import { randomUUID } from 'node:crypto';
import { EXTERNAL_RESOURCES } from '@svc/gateway';
import { expect } from 'chai';
import { ROUTES, shapeOf } from './route-table.js';
import { type World, world } from './support/world.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The generated tests cover what the route table lists, so the table must list every route the gateway serves and
 * every operation of its OpenAPI document (decision 0100). Besides the document,
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
    // And the table lists nothing the gateway does not serve (a stale row would test nothing); paths deeper than an
    // item are not probed, the OpenAPI case below covers them.
    for (const r of ROUTES.filter((row) => /^\/[\w-]+(\/\{\w+\})?$/.test(row.path)))
      expect(served, `row ${r.method} ${r.path}`).to.include(`${r.method} /${r.path.split('/')[1]} (${shapeOf(r.path)})`);
  });

  it('has a row, with the same permission, for every operation of the OpenAPI document, and no row the document lacks', async () => {
    const res = await fetch(`${w.system.gatewayUrl}/integrations/external/openapi.json`);
    expect(res.status).to.equal(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { 'x-permission'?: string }>> };
    const shape = (path: string) => path.replace(/\{\w+\}/g, '{}');
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        id: `${method.toUpperCase()} ${shape(path.replace('/integrations/external', ''))}`,
        permission: op['x-permission'],
      })),
    );
    const rows = new Map(ROUTES.map((r) => [`${r.method} ${shape(r.path)}`, r.permission]));
    // A batch checks each item's permission (create, or update for an upsert; decision 0181): the document names none,
    // its row the one a create-mode batch needs.
    for (const d of documented) if (d.permission === undefined && d.id.endsWith('/batch')) d.permission = rows.get(d.id);
    expect(documented.length).to.be.above(0);
    expect(
      documented.filter((d) => !rows.has(d.id)).map((d) => d.id),
      'documented operations without a row',
    ).to.deep.equal([]);
    expect(
      documented.filter((d) => rows.get(d.id) !== d.permission).map((d) => `${d.id}: ${d.permission} vs ${rows.get(d.id)}`),
    ).to.deep.equal([]);
    expect(
      [...rows.keys()].filter((id) => !documented.some((d) => d.id === id)),
      'rows the document lacks',
    ).to.deep.equal([]);
  });
});
