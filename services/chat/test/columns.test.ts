import type { EntityName } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import { definedColumns } from '@svc/platform/db/native';
import { expect } from 'chai';
import { chatEntities } from '../src/entities.js';

/**
 * The stores build their statements at module load from `definedColumns` (decision 0209); these checks keep those
 * columns equal to what the ORM discovers from the same entities.
 */
describe('chat store columns against the ORM metadata', () => {
  it('names every column of every chat entity as the ORM does', async () => {
    // Metadata discovery only: MikroORM 7 connects lazily, and nothing here queries (the URL leads nowhere).
    const orm = await MikroORM.init({ entities: chatEntities, clientUrl: 'postgres://metadata@127.0.0.1:1/none' });
    try {
      // Each entity one at a time: a list of different entities has no common type the metadata takes.
      const own = chatEntities as unknown as (EntityName<object> & { meta: { className: string; properties: Record<string, unknown> } })[];
      const wrong = own.flatMap((entity) => {
        const fromOrm = orm
          .getMetadata()
          .get(entity)
          .props.filter((p) => p.kind === 'scalar' && p.persist !== false)
          .map((p) => p.fieldNames[0] as string)
          .sort();
        const defined = definedColumns(entity)
          .map((c) => c.column)
          .sort();
        return JSON.stringify(fromOrm) === JSON.stringify(defined) ? [] : [`${entity.meta.className}: ${defined} vs ${fromOrm}`];
      });
      expect(wrong).to.deep.equal([]);
    } finally {
      await orm.close();
    }
  });
});
