import { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import { Task } from '../src/tasks/task.entity.js';
import { TASK_COLUMNS } from '../src/tasks/task.store.js';

const pgTypeOf = (column: string) => TASK_COLUMNS.find((c) => c.column === column)?.pgType;

/**
 * task.store.ts writes and reads `tasks` with SQL whose column list and bound types come from the entity's
 * definition (`definedColumns`: one multi-row insert statement needs them at module load, before any ORM exists).
 * These checks keep them equal to what the ORM discovers from the same entity (its naming, its column types).
 */
describe('task store statements against the Task entity', () => {
  let columns: { column: string; type: string }[];
  before(async () => {
    // Metadata discovery only: MikroORM 7 connects lazily, and nothing here queries (the URL leads nowhere).
    const orm = await MikroORM.init({ entities: [Task], clientUrl: 'postgres://metadata@127.0.0.1:1/none' });
    columns = orm
      .getMetadata()
      .get(Task)
      .props.filter((p) => p.kind === 'scalar' && p.persist !== false)
      .map((p) => ({ column: p.fieldNames[0] as string, type: p.columnTypes[0] as string }));
    await orm.close();
  });

  it('lists every column of the entity, and no other', () => {
    expect(TASK_COLUMNS.map((c) => c.column).sort()).to.deep.equal(columns.map((c) => c.column).sort());
  });

  it('binds each column as a type of the column itself', () => {
    // What the column type is bound as: varchar(n) takes text, int and integer are int4.
    const bound = (t: string) =>
      t
        .replace(/^varchar\(\d+\)/, 'text')
        .replace(/^(int|integer)\b/, 'int4')
        .replace(/^smallint/, 'int2')
        .replace(/^boolean/, 'bool');
    const wrong = columns
      .filter((c) => !c.type.endsWith('[]'))
      .filter((c) => pgTypeOf(c.column) !== bound(c.type))
      .map((c) => `${c.column}: ${c.type} bound as ${pgTypeOf(c.column)}`);
    expect(wrong).to.deep.equal([]);
  });
});
