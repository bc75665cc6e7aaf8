import { expect } from 'chai';
import { RouteTemplates, UNMATCHED } from '../src/request-metrics.js';

describe('gateway request metrics: route templates', () => {
  const learned = () => {
    const t = new RouteTemplates();
    t.learn('crm', {
      '/integrations/external/leads': ['get', 'post'],
      '/integrations/external/leads/{ref}': ['get', 'put'],
      '/integrations/external/proposals/{id}/attachments': ['get', 'post'],
    });
    t.learn('chat', {
      '/integrations/external/chats/{id}': ['get'],
      '/integrations/external/chats/unread-summary': ['get'],
      '/integrations/external/chats/{id}/messages': ['get', 'post'],
    });
    t.learn('files', { '/integrations/external/files/{id}': ['parameters', 'get', 'delete'] });
    return t;
  };

  it('labels an external request with the template its service documents, and the service that owns it', () => {
    const t = learned();
    expect(t.label('GET', '/integrations/external/leads/123', 200)).to.deep.equal({
      route: '/integrations/external/leads/{ref}',
      upstream: 'crm',
    });
    expect(t.label('POST', '/integrations/external/leads', 201)).to.deep.equal({ route: '/integrations/external/leads', upstream: 'crm' });
    expect(t.label('GET', '/integrations/external/chats/9/messages', 200)).to.deep.equal({
      route: '/integrations/external/chats/{id}/messages',
      upstream: 'chat',
    });
    // The upload to a proposal is served by files under crm's template.
    expect(t.label('POST', '/integrations/external/proposals/7/attachments', 201)).to.deep.equal({
      route: '/integrations/external/proposals/{id}/attachments',
      upstream: 'files',
    });
  });

  it('prefers a literal segment to a parameter', () => {
    expect(learned().label('GET', '/integrations/external/chats/unread-summary', 200).route).to.equal(
      '/integrations/external/chats/unread-summary',
    );
  });

  it('labels by resource before the service has been read, and an unknown path as unmatched', () => {
    const t = new RouteTemplates();
    expect(t.label('GET', '/integrations/external/tasks/5', 200)).to.deep.equal({
      route: '/integrations/external/tasks/*',
      upstream: 'tasks',
    });
    expect(learned().label('GET', '/integrations/external/leads/1/x/y', 404).route).to.equal('/integrations/external/leads/*');
    // A method the route does not serve is not that route.
    expect(learned().label('DELETE', '/integrations/external/leads/1', 404).route).to.equal('/integrations/external/leads/*');
    expect(t.label('GET', '/integrations/external/nothing/5', 404)).to.deep.equal({ route: UNMATCHED, upstream: 'none' });
    expect(t.label('GET', '/wp-login.php', 404)).to.deep.equal({ route: UNMATCHED, upstream: 'none' });
  });

  it("replaces a service's templates when its document changes", () => {
    const t = learned();
    t.learn('crm', { '/integrations/external/deals/{ref}': ['get'] });
    expect(t.label('GET', '/integrations/external/leads/1', 200).route).to.equal('/integrations/external/leads/*');
    expect(t.label('GET', '/integrations/external/deals/1', 200).route).to.equal('/integrations/external/deals/{ref}');
  });

  it('labels the admin API by collection with its ids replaced, the public routes and its own', () => {
    const t = learned();
    const company = '0198f7a0-0000-7000-8000-000000000001';
    expect(t.label('GET', `/admin/v1/companies/${company}/webhooks/abc/deliveries`, 200)).to.deep.equal({
      route: '/admin/v1/companies/{id}/webhooks/{id}/deliveries',
      upstream: 'webhooks',
    });
    expect(t.label('GET', `/admin/v1/companies/${company}/users`, 401).route).to.equal('/admin/v1/*');
    expect(t.label('GET', '/admin/v1/companies/x/Weird_Name/1', 404).route).to.equal('/admin/v1/*');
    expect(t.label('GET', '/public/files/abc', 200)).to.deep.equal({ route: '/public/files/{id}', upstream: 'files' });
    expect(t.label('GET', '/public/satisfaction/tok', 200)).to.deep.equal({ route: '/public/satisfaction/{token}', upstream: 'crm' });
    expect(t.label('GET', '/healthz', 200)).to.deep.equal({ route: '/healthz', upstream: 'gateway' });
    expect(t.label('GET', '/integrations/external/openapi.json', 200)).to.deep.equal({
      route: '/integrations/external/openapi.json',
      upstream: 'gateway',
    });
  });
});
