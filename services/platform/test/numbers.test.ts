import { Metadata, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { expect } from 'chai';
import pg from 'pg';
import { errorBodyOf, isNumberOutOfRange } from '../src/errors.js';
import { unary } from '../src/grpc/server.js';
import { toAppError } from '../src/http/errors.js';
import { skipParam, takeParam } from '../src/http/parse.js';
import { createLogger } from '../src/logging.js';
import { codeOf, INT4, intField, intQuery, numericMax } from '../src/numbers.js';

const logger = createLogger('test', 'silent');

/** Numbers checked against the range of what stores them (issue 23 item 2), and Postgres's refusal as a 400. */
describe('numbers and their columns’ ranges', () => {
  it('reads a code only when an int4 column can hold it: a longer or larger one names no record', () => {
    expect(codeOf('1')).to.equal(1);
    expect(codeOf('2147483647')).to.equal(INT4.max);
    for (const text of ['2147483648', '9999999999', '10000000000', '0', '01', '-1', '1.5', '1e3', ' 1', ''])
      expect(codeOf(text), text).to.equal(null);
  });

  it('bounds body and query integers to a column’s range, naming the range', () => {
    expect(intField().safeParse(INT4.max).success).to.equal(true);
    const over = intField(0).safeParse(INT4.max + 1);
    expect(over.success).to.equal(false);
    expect(over.error?.issues[0]?.message).to.equal(`must be an integer from 0 to ${INT4.max}`);
    expect(intQuery(1, 10).safeParse('11').success).to.equal(false);
    expect(intQuery(1, 10).parse('10')).to.equal(10);
    expect(numericMax(14, 2)).to.equal(999_999_999_999.99);
  });

  it('caps a take above a list’s maximum rather than refusing it; a take below 1 or not an integer is refused', () => {
    expect(takeParam(100).parse('101')).to.equal(100);
    expect(takeParam(100).parse('99999999999')).to.equal(100);
    expect(takeParam(100).parse('7')).to.equal(7);
    expect(takeParam(100).safeParse('0').success).to.equal(false);
    expect(takeParam(100).safeParse('1.5').success).to.equal(false);
    expect(skipParam().safeParse('1e400').success).to.equal(false);
  });

  describe('Postgres refusing a number (SQLSTATE 22003) is a 400, never a 500', () => {
    let client: pg.Client;
    let refused: unknown;
    before(async () => {
      client = new pg.Client({ connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
      await client.connect();
      refused = await client.query('select $1::int4', ['2147483648']).then(
        () => undefined,
        (e: unknown) => e,
      );
    });
    after(() => client?.end());

    it('maps the driver’s error to a 400 naming the request', () => {
      expect(isNumberOutOfRange(refused)).to.equal(true);
      const e = toAppError(refused, logger, { method: 'GET', path: '/x' });
      expect(errorBodyOf(e)).to.deep.equal({
        statusCode: 400,
        message: 'request: a number is beyond the range the service stores',
        error: 'Bad Request',
        details: { fields: [{ field: 'request', message: 'a number is beyond the range the service stores' }] },
      });
      // Wrapped by an ORM, as MikroORM does.
      expect(isNumberOutOfRange(Object.assign(new Error('wrapped'), { cause: refused }))).to.equal(true);
      expect(isNumberOutOfRange(new Error('other'))).to.equal(false);
    });

    it('answers INVALID_ARGUMENT over gRPC', async () => {
      const handler = unary(logger, async () => {
        throw refused;
      });
      const code = await new Promise<number | undefined>((resolve) =>
        handler({ request: {}, metadata: new Metadata() } as unknown as ServerUnaryCall<unknown, unknown>, (err) => resolve(err?.code)),
      );
      expect(code).to.equal(status.INVALID_ARGUMENT);
    });
  });
});
