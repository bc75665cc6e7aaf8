import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import { Deal } from '../deals/deal.entity.js';
import { Delivery } from '../deliveries/delivery.entity.js';
import { Lead } from '../leads/lead.entity.js';
import { SatisfactionLink, SatisfactionSubmission } from './satisfaction.entity.js';

const LINKS = tableOf(SatisfactionLink);
const SUBMISSIONS = tableOf(SatisfactionSubmission);
const BRIEF = ['id', 'title', 'code'] as const;

const INSERT_LINK = statement('crm_satisfaction_link_insert', LINKS.insert());
const UPDATE_LINK = statement('crm_satisfaction_link_update', LINKS.update(['id', 'companyId']));
const BY_TOKEN = statement(
  'crm_satisfaction_link_by_token',
  `select ${LINKS.select('l')} from satisfaction_links l where l.token_hash = $1`,
);
const BY_TOKEN_LOCKED = statement(
  'crm_satisfaction_link_by_token_locked',
  `select ${LINKS.select('l')} from satisfaction_links l where l.token_hash = $1 for update`,
);
const INSERT_SUBMISSION = statement('crm_satisfaction_submission_insert', SUBMISSIONS.insert());
const brief = (kind: 'lead' | 'deal' | 'delivery', select: string) =>
  statement(
    `crm_satisfaction_${kind}_brief`,
    `select ${select} from ${kind === 'delivery' ? 'deliveries' : `${kind}s`} r where r.company_id = $1 and r.id = $2`,
  );
const BRIEFS = {
  lead: brief('lead', tableOf(Lead).select('r', BRIEF)),
  deal: brief('deal', tableOf(Deal).select('r', BRIEF)),
  delivery: brief('delivery', tableOf(Delivery).select('r', [...BRIEF, 'status'])),
};

export type RecordBrief = Pick<Delivery, (typeof BRIEF)[number]> & { status?: number };

export async function insertLink(db: Db, link: SatisfactionLink): Promise<void> {
  await run(db, INSERT_LINK, LINKS.values(link));
}

export async function updateLink(db: Db, link: SatisfactionLink): Promise<void> {
  await run(db, UPDATE_LINK, LINKS.values(link));
}

/** The link of a token's hash; `lock` holds it until the transaction ends. */
export async function linkByToken(db: Db, tokenHash: string, lock = false): Promise<SatisfactionLink | null> {
  const [row] = await run(db, lock ? BY_TOKEN_LOCKED : BY_TOKEN, [tokenHash]);
  return row ? LINKS.hydrate(row) : null;
}

export async function insertSubmission(db: Db, submission: SatisfactionSubmission): Promise<void> {
  await run(db, INSERT_SUBMISSION, SUBMISSIONS.values(submission));
}

/** `{id, title, code}` of the company's lead, deal or delivery (a delivery with its `status`), or null. */
export async function recordBrief(db: Db, kind: keyof typeof BRIEFS, companyId: string, id: string): Promise<RecordBrief | null> {
  const [row] = await run<RecordBrief>(db, BRIEFS[kind], [companyId, id]);
  return row ?? null;
}
