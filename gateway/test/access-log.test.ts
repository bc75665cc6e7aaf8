import { createLogger } from '@svc/platform/logging';
import { expect } from 'chai';
import { type AccessEntry, accessLogOf } from '../src/access-log.js';

const captured = () => {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
};
const withoutTime = (line: string) => line.replace(/"time":"[^"]*"/, '"time":""');

describe('access log line', () => {
  const entries: AccessEntry[] = [
    {
      request_id: 'b3c1f1de-0000-4000-8000-000000000000',
      method: 'GET',
      route: '/integrations/external/leads/{id}',
      path: '/integrations/external/leads/01a2',
      status: 200,
      duration_ms: 1.234,
      key_id: '01a218eb-13c0-76d1-8c69-bdda2f2a6663',
      client_address: '127.0.0.1',
    },
    // Quotes, backslashes, control and non-ASCII characters in the path; no key, no address.
    {
      request_id: 'r"1\\',
      method: 'DELETE',
      route: '(unmatched)',
      path: '/a/é"x\u0001\n',
      status: 404,
      duration_ms: 0.01,
      key_id: undefined,
      client_address: undefined,
    },
  ];

  it('is the line pino writes for logger.info(entry, "request"), byte for byte but the time', () => {
    for (const entry of entries) {
      const viaPino = captured();
      createLogger('gateway', 'info', viaPino).info({ ...entry }, 'request');
      const byHand = captured();
      accessLogOf(createLogger('gateway', 'info', byHand))(entry);
      expect(byHand.lines).to.have.length(1);
      expect(withoutTime(byHand.lines[0]!)).to.equal(withoutTime(viaPino.lines[0]!));
      expect(JSON.parse(byHand.lines[0]!).time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('obeys the logger level', () => {
    const out = captured();
    const logger = createLogger('gateway', 'warn', out);
    const log = accessLogOf(logger);
    log(entries[0]!);
    expect(out.lines).to.have.length(0);
    logger.level = 'info';
    log(entries[0]!);
    expect(out.lines).to.have.length(1);
  });
});
