import { expect } from 'chai';
import { ConfigError, loadConfig, serviceConfigSchema } from '../src/config.js';

const valid = {
  HTTP_PORT: '8081',
  GRPC_PORT: '9081',
  METRICS_PORT: '9181',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/db',
  NATS_URL: '127.0.0.1:4222',
  IDENTITY_TOKEN_SECRET: 's'.repeat(32),
};

describe('configuration from the environment', () => {
  it('parses a valid environment into typed values with defaults', () => {
    const c = loadConfig(serviceConfigSchema, valid);
    expect(c.HTTP_PORT).to.equal(8081);
    expect(c.METRICS_PORT).to.equal(9181);
    expect(c.NATS_STREAM).to.equal('EVENTS');
    expect(c.LOG_LEVEL).to.equal('info');
  });

  it('names a missing variable', () => {
    const { DATABASE_URL: _, ...env } = valid;
    expect(() => loadConfig(serviceConfigSchema, env)).to.throw(ConfigError, /DATABASE_URL: is required but not set/);
  });

  it('names every malformed variable at once', () => {
    try {
      loadConfig(serviceConfigSchema, {
        ...valid,
        DATABASE_URL: 'mysql://x',
        HTTP_PORT: '70000',
        IDENTITY_TOKEN_SECRET: 'short',
        NATS_URL: 'nats',
      });
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      for (const name of ['DATABASE_URL', 'HTTP_PORT', 'IDENTITY_TOKEN_SECRET', 'NATS_URL']) expect(problems).to.contain(name);
    }
  });
});
