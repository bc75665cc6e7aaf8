import { Writable } from 'node:stream';
import { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import pg from 'pg';
import { createLogger } from '../src/logging.js';
import { TEST_POSTGRES_URL } from '../src/testing.js';

/** What a logged error may carry: its kind and where it came from, never text of a request (personal data). */
describe('logged errors carry no request text', () => {
  let db: pg.Client;
  const lines: string[] = [];
  const logger = createLogger(
    'logging-test',
    'info',
    new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  const failure = async (sql: string, params: unknown[]) => {
    try {
      await db.query(sql, params);
    } catch (err) {
      return err;
    }
    throw new Error('the statement did not fail');
  };

  before(async () => {
    db = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await db.connect();
  });
  after(() => db.end());
  beforeEach(() => {
    lines.length = 0;
  });

  it('drops the context, detail and quoted values of a Postgres error, keeping its code, routine and message kind', async () => {
    const json = await failure('select $1::jsonb', ['{"title":"Maria Secreta","note":"call her at home\\u0000"}']);
    const uuid = await failure('select $1::uuid', ['Maria Secreta']);
    await db.query('create temporary table people (email text unique)');
    await db.query(`insert into people values ('maria.secreta@example.test')`);
    const unique = await failure('insert into people values ($1)', ['maria.secreta@example.test']);
    for (const err of [json, uuid, unique]) logger.error({ err, path: '/integrations/external/leads' }, 'unhandled error');
    const text = lines.join('');
    expect(text).to.not.match(/Maria|Secreta|call her|maria\.secreta/i);
    const entries = lines.map((l) => JSON.parse(l));
    expect(entries.map((e) => e.err.code)).to.deep.equal(['22P05', '22P02', '23505']);
    expect(entries[0].err.message).to.equal('unsupported Unicode escape sequence');
    expect(entries[1].err.message).to.equal('invalid input syntax for type uuid: "[redacted]"');
    expect(entries[2].err).to.include({ constraint: 'people_email_key', table: 'people' });
    expect(entries[0].path).to.equal('/integrations/external/leads');
    expect(entries[0].err.stack).to.be.a('string');
  });

  it('drops the statement and parameters a MikroORM error carries', async () => {
    const orm = await MikroORM.init({ clientUrl: TEST_POSTGRES_URL, entities: [], discovery: { warnWhenNoEntities: false } });
    try {
      await orm.em.getConnection().execute('select ?::uuid as id', ['Maria Secreta']);
      expect.fail('the statement did not fail');
    } catch (err) {
      logger.error({ err }, 'unhandled error');
    } finally {
      await orm.close();
    }
    expect(lines.join('')).to.not.match(/Maria|Secreta/);
    expect(JSON.parse(lines[0]!).err.code).to.equal('22P02');
  });
});
