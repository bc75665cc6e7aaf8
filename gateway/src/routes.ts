export type Upstream = 'crm' | 'tasks' | 'chat' | 'files' | 'webhooks';

/** The external API's resources and their owners; the reliability suite checks that each served one has rows. */
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

/**
 * `/integrations/external/<resource>/...` → the service that owns the resource. One exception: a file uploaded to a
 * proposal (`POST /proposals/{id}/attachments`, multipart) goes to the files service, which stores it and registers it
 * with crm (decision 0078).
 */
export function externalUpstream(path: string, method = 'GET'): Upstream | undefined {
  const parts = path.split('/');
  const resource = parts[3];
  if (resource === 'proposals' && method === 'POST' && parts.length === 6 && parts[5] === 'attachments') return 'files';
  return resource ? EXTERNAL[resource] : undefined;
}

/** `/admin/v1/companies/{cid}/<collection>/...` → its owner; everything else under companies is crm's. */
export function adminUpstream(path: string): Upstream | undefined {
  const parts = path.split('/');
  if (parts[3] !== 'companies') return undefined;
  const collection = parts[5];
  return (collection && ADMIN_BY_COLLECTION[collection]) || 'crm';
}
