import { conflict, invalidField, requireUuid } from '@svc/platform/errors';
import type { CrmPeer } from '@svc/platform/peers/crm';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { CreateAgentBody, CreateInstagramAccountBody, CreateTemplateBody, CreateWhatsappNumberBody } from './account.schema.js';
import {
  type AgentRow,
  agentView,
  type InstagramRow,
  instagramView,
  type NumberRow,
  numberView,
  type TemplateRow,
  templateView,
} from './account.view.js';

const isUniqueViolation = (err: unknown) => typeof err === 'object' && err !== null && 'code' in err && err.code === '23505';

/** Numbers, accounts, agents and templates: written by the management API, read by the chat routes. */
export class AccountService {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly crm: CrmPeer,
  ) {}

  private async company(companyId: string): Promise<Pool> {
    await this.crm.getCompany(requireUuid(companyId, 'Company'));
    return this.pool();
  }

  async createNumber(companyId: string, body: CreateWhatsappNumberBody) {
    const pool = await this.company(companyId);
    try {
      const { rows } = await pool.query<NumberRow>(
        `insert into whatsapp_numbers (id, company_id, display_number, raw_number, phone_number_id, verified_name, provider, business_account_id,
           provider_status, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, now()) returning *`,
        [
          uuidv7(),
          companyId,
          body.display_number,
          body.raw_number,
          body.phone_number_id,
          body.verified_name ?? null,
          body.provider ?? 'sandbox',
          body.business_account_id ?? null,
          body.provider_status ?? 'CONNECTED',
        ],
      );
      return numberView(rows[0]!);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('phone_number_id: already registered');
      throw err;
    }
  }

  async createInstagram(companyId: string, body: CreateInstagramAccountBody) {
    const pool = await this.company(companyId);
    try {
      const { rows } = await pool.query<InstagramRow>(
        `insert into instagram_accounts (id, company_id, handle, display_name, external_account_id, provider, provider_status, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, now()) returning *`,
        [
          uuidv7(),
          companyId,
          body.handle.replace(/^@/, ''),
          body.display_name,
          body.external_account_id,
          body.provider ?? 'sandbox',
          body.provider_status ?? 'CONNECTED',
        ],
      );
      return instagramView(rows[0]!);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('external_account_id: already registered');
      throw err;
    }
  }

  /** Every number and account id must be the company's (400 naming the field otherwise). */
  private async checkChannels(pool: Pool, companyId: string, numbers: string[], accounts: string[]) {
    const { rows } = await pool.query<{ n: number; a: number }>(
      `select (select count(*)::int from whatsapp_numbers where company_id = $1 and id = any($2::uuid[])) as n,
              (select count(*)::int from instagram_accounts where company_id = $1 and id = any($3::uuid[])) as a`,
      [companyId, numbers, accounts],
    );
    if (rows[0]!.n !== new Set(numbers).size) throw invalidField('whatsapp_number_ids', 'WhatsApp number not found');
    if (rows[0]!.a !== new Set(accounts).size) throw invalidField('instagram_account_ids', 'Instagram account not found');
  }

  async createAgent(companyId: string, body: CreateAgentBody) {
    const pool = await this.company(companyId);
    const user = await this.crm.getUser(companyId, body.user_id).catch(() => null);
    if (!user) throw invalidField('user_id', 'no user of the company has this id');
    const numbers = [...new Set(body.whatsapp_number_ids ?? [])];
    const accounts = [...new Set(body.instagram_account_ids ?? [])];
    await this.checkChannels(pool, companyId, numbers, accounts);
    try {
      const { rows } = await pool.query<AgentRow>(
        `insert into agents (id, company_id, user_id, status, whatsapp_number_ids, instagram_account_ids, created_at)
         values ($1, $2, $3, $4, $5, $6, now()) returning *`,
        [uuidv7(), companyId, body.user_id, body.status ?? 'ACTIVE', numbers, accounts],
      );
      return agentView(rows[0]!);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('user_id: the user is already an agent');
      throw err;
    }
  }

  async createTemplate(companyId: string, body: CreateTemplateBody) {
    const pool = await this.company(companyId);
    await this.checkChannels(pool, companyId, [body.whatsapp_number_id], []).catch(() => {
      throw invalidField('whatsapp_number_id', 'WhatsApp number not found');
    });
    try {
      const { rows } = await pool.query<TemplateRow>(
        `insert into message_templates (id, company_id, whatsapp_number_id, name, language, category, status, components, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, now()) returning *`,
        [
          uuidv7(),
          companyId,
          body.whatsapp_number_id,
          body.name,
          body.language,
          body.category,
          body.status ?? 'APPROVED',
          JSON.stringify(body.components),
        ],
      );
      return templateView(rows[0]!);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('name: a template of this name and language exists for the number');
      throw err;
    }
  }
}
