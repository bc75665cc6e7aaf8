import { expect } from 'chai';
import type { CallResult } from '../support/client.js';
import { expectErrorBody } from '../support/errors.js';
import { postMultipart } from '../support/files.js';
import { pathKinds, pathOf, ROUTES, type RouteRow, withValueAt } from './route-table.js';
import { type World, world } from './support/world.js';

/** Generated from the route table (OWASP API1, broken object level authorization; API5, function level). */
describe('reliability: tenancy and permissions on every route (generated from the route table)', () => {
  let w: World;
  before(async function () {
    this.timeout(180_000);
    w = await world();
  });

  const send = (row: RouteRow, token: string, o: { path?: string; body?: unknown; query?: Record<string, string> } = {}) => {
    const path = o.path ?? pathOf(row, w.own.ids);
    const query = o.query ?? row.query?.(w.own.ids);
    const qs = query ? `?${new URLSearchParams(query)}` : '';
    // A write without a body of its own sends an empty object: the body rule (415/400) runs before the permission.
    const fallback = row.method === 'GET' || row.method === 'DELETE' ? undefined : {};
    if (row.parts && !o.body) return postMultipart(`${w.system.gatewayUrl}${path}${qs}`, token, row.parts(w.own.ids));
    return w.call(row.method, path + qs, { token, body: o.body ?? row.body?.(w.own.ids) ?? fallback });
  };
  /** Nothing of the other company in the answer. */
  const noLeak = (res: CallResult) => expect(res.text, "the other company's data").not.to.contain(w.other.marker);
  const refused = (res: CallResult, statuses: number[]) => {
    expect(statuses, `${res.status} ${res.text}`).to.include(res.status);
    expectErrorBody(res);
    noLeak(res);
  };
  /** The other company's record the path named is still there, unchanged. */
  const untouched = async (row: RouteRow) => {
    const kind = pathKinds(row)[0];
    // The records with a title the other company can read back by their id.
    if (!kind || row.method === 'GET' || !['leads', 'deals', 'tasks'].includes(row.path.split('/')[1]!)) return;
    const res = await w.call('GET', `/integrations/external/${row.path.split('/')[1]}/${w.other.ids[kind]}`, { token: w.other.key });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.title).to.contain(w.other.marker);
  };

  for (const row of ROUTES) {
    describe(`${row.method} ${row.path}`, () => {
      if (row.method !== 'DELETE' && row.baseline !== false) {
        it('answers the own company (the cases below change one id of this request)', async () => {
          const res = await send(row, w.own.key);
          expect(res.status, res.text).to.be.within(200, 299);
          noLeak(res);
        });
      }
      for (const kind of pathKinds(row)) {
        it(`another company's ${kind} in the path is 404, and stays as it was`, async () => {
          refused(await send(row, w.own.key, { path: pathOf(row, w.own.ids, { [kind]: w.other.ids[kind] }) }), [404]);
          await untouched(row);
        });
      }
      for (const [name, kind] of Object.entries(row.queryIds ?? {})) {
        it(`another company's ${kind} in the query (${name}) finds nothing`, async () => {
          const res = await send(row, w.own.key, { query: { ...row.query?.(w.own.ids), [name]: w.other.ids[kind] } });
          noLeak(res);
          if (res.status === 200) {
            const records = Array.isArray(res.body) ? res.body : res.body.records;
            expect(records, res.text).to.deep.equal([]);
            if (!Array.isArray(res.body) && 'total' in res.body) expect(res.body.total).to.equal(0);
          } else refused(res, [400, 404]);
        });
      }
      for (const [field, kind] of Object.entries(row.bodyIds ?? {})) {
        it(`another company's ${kind} in the body (${field}) is refused`, async () => {
          const body = withValueAt(row.body!(w.own.ids, field), field, w.other.ids[kind]);
          refused(await send(row, w.own.key, { body }), [400, 404, 422]);
        });
      }
      it(`a key without ${row.permission} is 403 (OWASP API5)`, async () => {
        const others = [...new Set(ROUTES.map((r) => r.permission))].filter((p) => p !== row.permission);
        const res = await send(row, await w.keyWith(others));
        expect(res.status, res.text).to.equal(403);
        expectErrorBody(res);
        expect(res.body.message).to.contain(row.permission);
      });
    });
  }
});
