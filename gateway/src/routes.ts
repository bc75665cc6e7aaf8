export type Upstream = 'crm' | 'tasks' | 'chat' | 'files' | 'webhooks';

/** The reliability suite checks that each served resource has rows. */
export const EXTERNAL: Record<string, Upstream> = {
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

const ADMIN_BY_COLLECTION: Record<string, Upstream> = {
  webhooks: 'webhooks',
  'task-types': 'tasks',
  'task-stages': 'tasks',
  'whatsapp-numbers': 'chat',
  'instagram-accounts': 'chat',
  agents: 'chat',
  'message-templates': 'chat',
  chats: 'chat',
};

/** Proposal attachments (multipart) go to files, which registers them with crm (decision 0078). */
export function externalUpstream(path: string, method = 'GET'): Upstream | undefined {
  const parts = path.split('/');
  const resource = parts[3];
  if (resource === 'proposals' && method === 'POST' && parts.length === 6 && parts[5] === 'attachments') return 'files';
  return resource ? EXTERNAL[resource] : undefined;
}

export function adminUpstream(path: string): Upstream | undefined {
  const parts = path.split('/');
  if (parts[3] !== 'companies') return undefined;
  const collection = parts[5];
  return (collection && ADMIN_BY_COLLECTION[collection]) || 'crm';
}
