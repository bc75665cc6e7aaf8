/** The chat routes' permissions: the spec's names (Authentication, 5), and its pattern where it names none (README). */
export const CHAT_PERMISSIONS = {
  read: 'crm/chats.read',
  create: 'crm/chats.create',
  write: 'crm/chats.write',
  update: 'crm/chats.update',
  delete: 'crm/chats.delete',
  leadUpdate: 'crm/lead.update',
  dealUpdate: 'crm/deal.update',
} as const;
