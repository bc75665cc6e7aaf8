export type Upstream = 'crm' | 'tasks' | 'chat' | 'files' | 'webhooks';

/** Where the integration API's routes start (the spec's base path). */
export const EXTERNAL_PREFIX = '/integrations/external';

/** The reliability suite checks that each served resource has rows. */
export const EXTERNAL: Readonly<Record<string, Upstream>> = {
  leads: 'crm',
  deals: 'crm',
  'custom-fields': 'crm',
  proposals: 'crm',
  satisfaction: 'crm',
  tasks: 'tasks',
  chats: 'chat',
  files: 'files',
  webhooks: 'webhooks',
};

const ADMIN_BY_COLLECTION: Readonly<Record<string, Upstream>> = {
  webhooks: 'webhooks',
  'task-types': 'tasks',
  'task-stages': 'tasks',
  'whatsapp-numbers': 'chat',
  'instagram-accounts': 'chat',
  agents: 'chat',
  'message-templates': 'chat',
  chats: 'chat',
};

/** Looked up as own keys only: `constructor` or `__proto__` in a path is no resource (it answered 500). */
const EXTERNAL_BY_RESOURCE = new Map(Object.entries(EXTERNAL));
const ADMIN_OWNERS = new Map(Object.entries(ADMIN_BY_COLLECTION));

/** The 4th segment of a path (`split('/')[3]`, '' when the path has fewer), without splitting it. */
export function resourceOf(path: string): string {
  let start = -1;
  for (let slash = 0; slash < 3; slash++) {
    start = path.indexOf('/', start + 1);
    if (start === -1) return '';
  }
  const end = path.indexOf('/', start + 1);
  return end === -1 ? path.slice(start + 1) : path.slice(start + 1, end);
}

/** Proposal attachments (multipart) go to files, which registers them with crm (decision 0078). */
export function externalUpstream(path: string, method = 'GET'): Upstream | undefined {
  const resource = resourceOf(path);
  if (resource === 'proposals' && method === 'POST') {
    const parts = path.split('/');
    if (parts.length === 6 && parts[5] === 'attachments') return 'files';
  }
  return EXTERNAL_BY_RESOURCE.get(resource);
}

export function adminUpstream(path: string): Upstream | undefined {
  const parts = path.split('/');
  if (parts[3] !== 'companies') return undefined;
  const collection = parts[5];
  return (collection && ADMIN_OWNERS.get(collection)) || 'crm';
}
