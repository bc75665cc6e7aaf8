import { type Stored, tableOf } from '@svc/platform/db/entity-table';
import type { Queryable } from '@svc/platform/db/native';
import { Agent, InstagramAccount, MessageTemplate, WhatsappNumber } from './account.entity.js';

export type StoredNumber = Stored<WhatsappNumber>;
export type StoredInstagram = Stored<InstagramAccount>;
export type StoredAgent = Stored<Agent>;
export type StoredTemplate = Stored<MessageTemplate>;

const NUMBER = tableOf(WhatsappNumber);
const INSTAGRAM = tableOf(InstagramAccount);
const AGENT = tableOf(Agent);
const TEMPLATE = tableOf(MessageTemplate);

export type AgentRef = { agentId: string } & Pick<Agent, 'userId' | 'status'>;

/** The property of an agent's accounts of a channel. */
const accountsOf = (channelType: string) => (channelType === 'INSTAGRAM' ? 'instagramAccountIds' : 'whatsappNumberIds');

export async function insertNumber(db: Queryable, n: Omit<StoredNumber, 'createdAt'>): Promise<StoredNumber> {
  const props = [
    'id',
    'companyId',
    'displayNumber',
    'rawNumber',
    'phoneNumberId',
    'verifiedName',
    'provider',
    'businessAccountId',
    'providerStatus',
  ] as const;
  const { rows } = await db.query<StoredNumber>(
    NUMBER.insertSome([...props, 'createdAt'], `returning ${NUMBER.select('whatsapp_numbers')}`),
    [...props.map((p) => n[p]), new Date()],
  );
  return rows[0]!;
}

export async function insertInstagram(db: Queryable, a: Omit<StoredInstagram, 'createdAt'>): Promise<StoredInstagram> {
  const props = ['id', 'companyId', 'handle', 'displayName', 'externalAccountId', 'provider', 'providerStatus'] as const;
  const { rows } = await db.query<StoredInstagram>(
    INSTAGRAM.insertSome([...props, 'createdAt'], `returning ${INSTAGRAM.select('instagram_accounts')}`),
    [...props.map((p) => a[p]), new Date()],
  );
  return rows[0]!;
}

export async function insertAgent(db: Queryable, a: Omit<StoredAgent, 'createdAt'>): Promise<StoredAgent> {
  const props = ['id', 'companyId', 'userId', 'status', 'whatsappNumberIds', 'instagramAccountIds'] as const;
  const { rows } = await db.query<StoredAgent>(AGENT.insertSome([...props, 'createdAt'], `returning ${AGENT.select('agents')}`), [
    ...props.map((p) => a[p]),
    new Date(),
  ]);
  return rows[0]!;
}

export async function insertTemplate(db: Queryable, t: Omit<StoredTemplate, 'createdAt'>): Promise<StoredTemplate> {
  const props = ['id', 'companyId', 'whatsappNumberId', 'name', 'language', 'category', 'status', 'components'] as const;
  const { rows } = await db.query<StoredTemplate>(
    TEMPLATE.insertSome([...props, 'createdAt'], `returning ${TEMPLATE.select('message_templates')}`),
    [...props.map((p) => (p === 'components' ? JSON.stringify(t.components) : t[p])), new Date()],
  );
  return rows[0]!;
}

export async function countChannels(db: Queryable, companyId: string, numbers: string[], accounts: string[]) {
  const { rows } = await db.query<{ numbers: number; accounts: number }>(
    `select (select count(*)::int from whatsapp_numbers where company_id = $1 and id = any($2::uuid[])) as numbers,
            (select count(*)::int from instagram_accounts where company_id = $1 and id = any($3::uuid[])) as accounts`,
    [companyId, numbers, accounts],
  );
  return rows[0]!;
}

export async function hasAccount(db: Queryable, companyId: string, channelType: string, accountId: string): Promise<boolean> {
  const table = channelType === 'WHATSAPP' ? 'whatsapp_numbers' : 'instagram_accounts';
  const { rowCount } = await db.query(`select 1 from ${table} where company_id = $1 and id = $2`, [companyId, accountId]);
  return rowCount === 1;
}

export async function accountByProviderId(
  db: Queryable,
  channel: string,
  providerId: string,
): Promise<Pick<StoredNumber, 'companyId' | 'id'> | null> {
  const whatsapp = channel === 'WHATSAPP';
  const table = whatsapp ? 'whatsapp_numbers' : 'instagram_accounts';
  const column = whatsapp ? NUMBER.column('phoneNumberId') : INSTAGRAM.column('externalAccountId');
  const { rows } = await db.query<Pick<StoredNumber, 'companyId' | 'id'>>({
    name: `inbound_account_${table}`,
    text: `select company_id as "companyId", id from ${table} where ${column} = $1`,
    values: [providerId],
  });
  return rows[0] ?? null;
}

/** The agents that may act on a channel account (a number or an Instagram account), active ones first. */
export async function agentsOfAccount(db: Queryable, companyId: string, channelType: string, accountId: string): Promise<AgentRef[]> {
  const accounts = accountsOf(channelType);
  const column = AGENT.column(accounts);
  const { rows } = await db.query<AgentRef>({
    name: `agents_of_${accounts}`,
    text: `select id as "agentId", user_id as "userId", status from agents where company_id = $1 and $2::uuid = any(${column})
      order by (status = 'ACTIVE') desc, created_at, id`,
    values: [companyId, accountId],
  });
  return rows;
}

/** The agent of a user on a channel account, if the user is one. */
export async function agentOfUser(db: Queryable, companyId: string, userId: string, channelType: string, accountId: string) {
  const accounts = accountsOf(channelType);
  const column = AGENT.column(accounts);
  const { rows } = await db.query<Pick<StoredAgent, 'id'>>({
    name: `agent_of_user_${accounts}`,
    text: `select id from agents where company_id = $1 and user_id = $2 and $3::uuid = any(${column})`,
    values: [companyId, userId, accountId],
  });
  return rows[0]?.id ?? null;
}

/** Whether an agent of the company acts on this channel account. */
export async function isAgentOfAccount(db: Queryable, companyId: string, agentId: string, channelType: string, accountId: string) {
  const { rowCount } = await db.query(
    `select 1 from agents where company_id = $1 and id = $2 and $3::uuid = any(${AGENT.column(accountsOf(channelType))})`,
    [companyId, agentId, accountId],
  );
  return rowCount === 1;
}

export async function countAgents(db: Queryable, companyId: string, ids: string[]): Promise<number> {
  const { rowCount } = await db.query('select id from agents where company_id = $1 and id = any($2::uuid[])', [companyId, ids]);
  return rowCount ?? 0;
}

/** Whether the number has an approved template of this name and language. */
export async function hasApprovedTemplate(db: Queryable, companyId: string, numberId: string, name: string, language: string) {
  const { rowCount } = await db.query({
    name: 'templates_for_send',
    text: `select 1 from message_templates where company_id = $1 and whatsapp_number_id = $2 and name = $3 and language = $4 and status = 'APPROVED'`,
    values: [companyId, numberId, name, language],
  });
  return rowCount === 1;
}

const TEMPLATE_PAGE = ['id', 'whatsappNumberId', 'name', 'language', 'category', 'status', 'components'] as const;
export type TemplateOfPage = Pick<StoredTemplate, (typeof TEMPLATE_PAGE)[number]> & { k: string };

/** Ordered by name, language and id; that text `k` is the cursor. */
export async function approvedTemplates(
  db: Queryable,
  companyId: string,
  numberId: string,
  q: { category: string | null; after: string | null; before: string | null; limit: number },
): Promise<TemplateOfPage[]> {
  const { rows } = await db.query<TemplateOfPage>(
    `select * from (select ${TEMPLATE.select('t', TEMPLATE_PAGE)}, t.name || ' ' || t.language || ' ' || t.id as k
       from message_templates t where t.company_id = $1 and t.whatsapp_number_id = $2 and t.status = 'APPROVED' and ($3::text is null or t.category = $3)
         and ($4::text is null or t.name || ' ' || t.language || ' ' || t.id > $4) and ($5::text is null or t.name || ' ' || t.language || ' ' || t.id < $5)
       order by k ${q.before ? 'desc' : 'asc'} limit $6) t order by k`,
    [companyId, numberId, q.category, q.after, q.before, q.limit],
  );
  return rows;
}
