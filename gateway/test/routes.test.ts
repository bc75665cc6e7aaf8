import { ConfigError, loadConfig } from '@svc/platform/config';
import { expect } from 'chai';
import { gatewayConfigSchema } from '../src/config.js';
import { adminUpstream, externalUpstream } from '../src/routes.js';

describe('gateway routing table', () => {
  it('sends each external resource to the service that owns it', () => {
    const cases: [string, string | undefined][] = [
      ['/integrations/external/leads', 'crm'],
      ['/integrations/external/leads/12', 'crm'],
      ['/integrations/external/deals/x', 'crm'],
      ['/integrations/external/custom-fields', 'crm'],
      ['/integrations/external/proposals/1/attachments', 'crm'],
      ['/integrations/external/satisfaction/links', 'crm'],
      ['/integrations/external/tasks', 'tasks'],
      ['/integrations/external/chats/1/messages', 'chat'],
      ['/integrations/external/files/1', 'files'],
      ['/integrations/external/webhooks/1/deliveries', 'webhooks'],
      ['/integrations/external/unknown', undefined],
      ['/integrations/external', undefined],
      ['/integrations/external/', undefined],
      ['/integrations/external//leads', undefined],
      // Names every plain object has are no resource.
      ['/integrations/external/constructor', undefined],
      ['/integrations/external/__proto__/1', undefined],
      ['/integrations/external/toString', undefined],
      ['/integrations/external/hasOwnProperty/x', undefined],
    ];
    for (const [path, upstream] of cases) expect(externalUpstream(path), path).to.equal(upstream);
  });

  it('sends a file uploaded to a proposal (POST .../proposals/{id}/attachments) to files, the rest of proposals to crm', () => {
    expect(externalUpstream('/integrations/external/proposals/1/attachments', 'POST')).to.equal('files');
    expect(externalUpstream('/integrations/external/proposals/1/attachments', 'GET')).to.equal('crm');
    expect(externalUpstream('/integrations/external/proposals/1/attachments/2', 'DELETE')).to.equal('crm');
    expect(externalUpstream('/integrations/external/proposals/1/documents', 'POST')).to.equal('crm');
    expect(externalUpstream('/integrations/external/proposals', 'POST')).to.equal('crm');
  });

  it('sends admin collections to their owners and everything else under companies to crm', () => {
    const cid = '0190a3c2-6a4f-7b1e-8a3b-0123456789ab';
    const cases: [string, string | undefined][] = [
      ['/admin/v1/companies', 'crm'],
      [`/admin/v1/companies/${cid}`, 'crm'],
      [`/admin/v1/companies/${cid}/keys/1`, 'crm'],
      [`/admin/v1/companies/${cid}/leads/1/win`, 'crm'],
      [`/admin/v1/companies/${cid}/delivery-pipelines`, 'crm'],
      [`/admin/v1/companies/${cid}/deliveries/1/move`, 'crm'],
      [`/admin/v1/companies/${cid}/contracts/1/renew`, 'crm'],
      [`/admin/v1/companies/${cid}/webhooks/1/deliveries`, 'webhooks'],
      [`/admin/v1/companies/${cid}/task-types`, 'tasks'],
      [`/admin/v1/companies/${cid}/task-stages`, 'tasks'],
      [`/admin/v1/companies/${cid}/whatsapp-numbers`, 'chat'],
      [`/admin/v1/companies/${cid}/chats/1/inbound`, 'chat'],
      [`/admin/v1/companies/${cid}/constructor`, 'crm'],
      [`/admin/v1/companies/${cid}/__proto__/1`, 'crm'],
      ['/admin/v1/other', undefined],
    ];
    for (const [path, upstream] of cases) expect(adminUpstream(path), path).to.equal(upstream);
  });
});

describe('gateway configuration', () => {
  const env = {
    REDIS_URL: 'redis://127.0.0.1:6379',
    ADMIN_TOKEN: 'a'.repeat(16),
    IDENTITY_TOKEN_SECRET: 's'.repeat(32),
    CRM_URL: 'http://127.0.0.1:8081',
    TASKS_URL: 'http://127.0.0.1:8082',
    CHAT_URL: 'http://127.0.0.1:8083',
    FILES_URL: 'http://127.0.0.1:8084',
    WEBHOOKS_URL: 'http://127.0.0.1:8085',
    CRM_GRPC_URL: '127.0.0.1:9081',
  };
  it('defaults to port 8080, 600 requests per minute and a 500 ms key cache', () => {
    const c = loadConfig(gatewayConfigSchema, env);
    expect([c.PORT, c.RATE_LIMIT_PER_MINUTE, c.KEY_CACHE_TTL_MS]).to.deep.equal([8080, 600, 500]);
  });
  it('refuses a key cache longer than one second, so revocation stays within a second', () => {
    expect(() => loadConfig(gatewayConfigSchema, { ...env, KEY_CACHE_TTL_MS: '5000' })).to.throw(ConfigError, /KEY_CACHE_TTL_MS/);
  });
  it('refuses a short admin token', () => {
    expect(() => loadConfig(gatewayConfigSchema, { ...env, ADMIN_TOKEN: 'short' })).to.throw(ConfigError, /ADMIN_TOKEN/);
  });
});
