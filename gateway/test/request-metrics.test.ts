import { expect } from 'chai';
import { requestLabels, UNMATCHED } from '../src/request-metrics.js';

describe('gateway request metrics: route template and upstream labels', () => {
  it('labels an external request with the template the serving service named, and the service that owns the route', () => {
    expect(requestLabels('GET', '/integrations/external/leads/123', 200, '/integrations/external/leads/{ref}')).to.deep.equal({
      route: '/integrations/external/leads/{ref}',
      upstream: 'crm',
    });
    // The upload to a proposal is the files service's.
    expect(
      requestLabels('POST', '/integrations/external/proposals/7/attachments', 201, '/integrations/external/proposals/{id}/attachments'),
    ).to.deep.equal({ route: '/integrations/external/proposals/{id}/attachments', upstream: 'files' });
  });

  it('labels a request no service served by resource, and an unknown path as unmatched', () => {
    // Answered by the gateway itself (401, 429, 503): no template came back.
    expect(requestLabels('GET', '/integrations/external/tasks/5', 401, undefined)).to.deep.equal({
      route: '/integrations/external/tasks/*',
      upstream: 'tasks',
    });
    expect(requestLabels('POST', '/integrations/external/leads', 401, undefined).route).to.equal('/integrations/external/leads');
    expect(requestLabels('GET', '/integrations/external/nothing/5', 404, undefined)).to.deep.equal({ route: UNMATCHED, upstream: 'none' });
    expect(requestLabels('GET', '/wp-login.php', 404, undefined)).to.deep.equal({ route: UNMATCHED, upstream: 'none' });
    // A header that is not an external template is not taken.
    expect(requestLabels('GET', '/integrations/external/leads/1', 200, '/elsewhere/1').route).to.equal('/integrations/external/leads/*');
  });

  it('labels the admin API by collection with its ids replaced, the public routes and its own', () => {
    const company = '0198f7a0-0000-7000-8000-000000000001';
    expect(requestLabels('GET', `/admin/v1/companies/${company}/webhooks/abc/deliveries`, 200, undefined)).to.deep.equal({
      route: '/admin/v1/companies/{id}/webhooks/{id}/deliveries',
      upstream: 'webhooks',
    });
    expect(requestLabels('GET', `/admin/v1/companies/${company}/users`, 401, undefined).route).to.equal('/admin/v1/*');
    expect(requestLabels('GET', '/admin/v1/companies/x/Weird_Name/1', 404, undefined).route).to.equal('/admin/v1/*');
    expect(requestLabels('GET', '/public/files/abc', 200, undefined)).to.deep.equal({ route: '/public/files/{id}', upstream: 'files' });
    expect(requestLabels('GET', '/public/satisfaction/tok', 200, undefined)).to.deep.equal({
      route: '/public/satisfaction/{token}',
      upstream: 'crm',
    });
    expect(requestLabels('GET', '/healthz', 200, undefined)).to.deep.equal({ route: '/healthz', upstream: 'gateway' });
    expect(requestLabels('GET', '/integrations/external/openapi.json', 200, undefined)).to.deep.equal({
      route: '/integrations/external/openapi.json',
      upstream: 'gateway',
    });
  });
});
