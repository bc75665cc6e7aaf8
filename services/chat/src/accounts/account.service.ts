import { conflict, invalidField, requireUuid } from '@svc/platform/errors';
import type { CrmPeer } from '@svc/platform/peers/crm';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { CreateAgentBody, CreateInstagramAccountBody, CreateTemplateBody, CreateWhatsappNumberBody } from './account.schema.js';
import { countChannels, insertAgent, insertInstagram, insertNumber, insertTemplate } from './account.store.js';
import { agentView, instagramView, numberView, templateView } from './account.view.js';

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
      const number = await insertNumber(pool, {
        id: uuidv7(),
        companyId,
        displayNumber: body.display_number,
        rawNumber: body.raw_number,
        phoneNumberId: body.phone_number_id,
        verifiedName: body.verified_name ?? null,
        provider: body.provider ?? 'sandbox',
        businessAccountId: body.business_account_id ?? null,
        providerStatus: body.provider_status ?? 'CONNECTED',
      });
      return numberView(number);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('phone_number_id: already registered');
      throw err;
    }
  }

  async createInstagram(companyId: string, body: CreateInstagramAccountBody) {
    const pool = await this.company(companyId);
    try {
      const account = await insertInstagram(pool, {
        id: uuidv7(),
        companyId,
        handle: body.handle.replace(/^@/, ''),
        displayName: body.display_name,
        externalAccountId: body.external_account_id,
        provider: body.provider ?? 'sandbox',
        providerStatus: body.provider_status ?? 'CONNECTED',
      });
      return instagramView(account);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('external_account_id: already registered');
      throw err;
    }
  }

  /** Every number and account id must be the company's (400 naming the field otherwise). */
  private async checkChannels(pool: Pool, companyId: string, numbers: string[], accounts: string[]) {
    const found = await countChannels(pool, companyId, numbers, accounts);
    if (found.numbers !== new Set(numbers).size) throw invalidField('whatsapp_number_ids', 'WhatsApp number not found');
    if (found.accounts !== new Set(accounts).size) throw invalidField('instagram_account_ids', 'Instagram account not found');
  }

  async createAgent(companyId: string, body: CreateAgentBody) {
    const pool = await this.company(companyId);
    const user = await this.crm.getUser(companyId, body.user_id).catch(() => null);
    if (!user) throw invalidField('user_id', 'no user of the company has this id');
    const numbers = [...new Set(body.whatsapp_number_ids ?? [])];
    const accounts = [...new Set(body.instagram_account_ids ?? [])];
    await this.checkChannels(pool, companyId, numbers, accounts);
    try {
      const agent = await insertAgent(pool, {
        id: uuidv7(),
        companyId,
        userId: body.user_id,
        status: body.status ?? 'ACTIVE',
        whatsappNumberIds: numbers,
        instagramAccountIds: accounts,
      });
      return agentView(agent);
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
      const template = await insertTemplate(pool, {
        id: uuidv7(),
        companyId,
        whatsappNumberId: body.whatsapp_number_id,
        name: body.name,
        language: body.language,
        category: body.category,
        status: body.status ?? 'APPROVED',
        components: body.components,
      });
      return templateView(template);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('name: a template of this name and language exists for the number');
      throw err;
    }
  }
}
