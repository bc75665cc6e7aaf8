import { createHash, randomBytes } from 'node:crypto';
import { inTransaction } from '@svc/platform/db/native';
import { conflict, gone, invalidField, notFound } from '@svc/platform/errors';
import type { OutboxWriter } from '@svc/platform/events/writer';
import { iso } from '@svc/platform/http/json';
import { RecordType } from '@svc/proto/crm/v1/records';
import { v7 as uuidv7 } from 'uuid';
import { findUser } from '../companies/company.store.js';
import type { Db, PoolOf } from '../db.js';
import { userSummary } from '../sales/sales.summaries.js';
import { RecordSummaries } from '../summaries/summary.service.js';
import type { SatisfactionLink, SatisfactionSubmission } from './satisfaction.entity.js';
import type { CreateLinkBody, SubmissionBody } from './satisfaction.schema.js';
import * as store from './satisfaction.store.js';

export const PUBLIC_PATH = '/public/satisfaction';
export const DEFAULT_FORM = { title: 'How did we do?', question: 'How satisfied are you with our service?', max_score: 5 };
const DEFAULT_EXPIRY_HOURS = 168;
/** 32 random bytes: 256 bits, base64url without padding (43 characters). */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

type RecordKind = 'lead' | 'deal' | 'delivery';

export interface LinkCreator {
  companyId: string;
  userId: string;
  keyId: string;
}

/** The form of a link, as the public page shows it and the event carries it. */
export const formOf = (l: SatisfactionLink) => ({ title: l.formTitle, question: l.formQuestion, max_score: l.maxScore });

/** Decision 0082: only the token's SHA-256 is stored; the link is locked while answered, so a token answered twice at once counts once. */
export class Satisfaction {
  private readonly summaries: RecordSummaries;

  constructor(
    private readonly pool: PoolOf,
    private readonly outbox: OutboxWriter,
  ) {
    this.summaries = new RecordSummaries(pool);
  }

  async createLink(creator: LinkCreator, body: CreateLinkBody, baseUrl: string) {
    const [kind, recordId, field] = (
      body.crm_lead_id
        ? ['lead', body.crm_lead_id, 'crm_lead_id']
        : body.crm_deal_id
          ? ['deal', body.crm_deal_id, 'crm_deal_id']
          : ['delivery', body.crm_delivery_id as string, 'crm_delivery_id']
    ) as [RecordKind, string, string];
    const type = { lead: RecordType.RECORD_TYPE_LEAD, deal: RecordType.RECORD_TYPE_DEAL, delivery: RecordType.RECORD_TYPE_DELIVERY }[kind];
    const found = await this.summaries.get({
      company_id: creator.companyId,
      viewer_user_id: creator.userId,
      refs: [{ type, id: recordId }],
    });
    const visible = { lead: found.leads, deal: found.deals, delivery: found.deliveries }[kind];
    // Unknown, another company's and hidden records answer alike, as on POST /tasks.
    if (!visible.length) throw invalidField(`${field}`, `${kind} not found`);
    const token = randomBytes(32).toString('base64url');
    const now = new Date();
    const link: SatisfactionLink = {
      id: uuidv7(),
      companyId: creator.companyId,
      tokenHash: hashToken(token),
      recordType: kind,
      recordId: recordId.toLowerCase(),
      formTitle: body.form?.title ?? DEFAULT_FORM.title,
      formQuestion: body.form?.question ?? DEFAULT_FORM.question,
      maxScore: body.form?.max_score ?? DEFAULT_FORM.max_score,
      createdById: creator.userId,
      keyId: creator.keyId,
      expiresAt: new Date(now.getTime() + (body.expires_in_hours ?? DEFAULT_EXPIRY_HOURS) * 3_600_000),
      usedAt: null,
      createdAt: now,
    };
    await store.insertLink(await this.pool(), link);
    return {
      id: link.id,
      token,
      url: `${baseUrl}${PUBLIC_PATH}/${token}`,
      expires_at: iso(link.expiresAt),
      crm_lead_id: kind === 'lead' ? link.recordId : null,
      crm_deal_id: kind === 'deal' ? link.recordId : null,
      crm_delivery_id: kind === 'delivery' ? link.recordId : null,
      form: formOf(link),
      created_at: iso(link.createdAt),
    };
  }

  /** The link of a token that can still be answered: unknown 404, answered 409, expired 410. */
  async open(token: string): Promise<SatisfactionLink> {
    return usable(await store.linkByToken(await this.pool(), hashOf(token)));
  }

  /** Records the answer and fires `satisfaction.public_submission_created` (payload: submissionPayload). */
  async submit(token: string, body: SubmissionBody) {
    const tokenHash = hashOf(token);
    return inTransaction(await this.pool(), async (tx) => {
      const link = usable(await store.linkByToken(tx, tokenHash, true));
      if (body.score < 1 || body.score > link.maxScore) throw invalidField('score', `must be an integer from 1 to ${link.maxScore}`);
      const now = new Date();
      link.usedAt = now;
      await store.updateLink(tx, link);
      const submission: SatisfactionSubmission = {
        id: uuidv7(),
        companyId: link.companyId,
        linkId: link.id,
        score: body.score,
        comment: body.comment ?? null,
        submittedAt: now,
      };
      await store.insertSubmission(tx, submission);
      const payload = await submissionPayload(tx, link, submission);
      await this.outbox.write(tx, [{ companyId: link.companyId, eventKey: 'satisfaction.public_submission_created', payload }]);
      return { id: submission.id, submitted_at: iso(submission.submittedAt) };
    });
  }
}

/** A token not of our shape is not looked up: it names nothing. */
function hashOf(token: string): string {
  if (!TOKEN.test(token)) throw notFound('Satisfaction link');
  return hashToken(token);
}

function usable(link: SatisfactionLink | null): SatisfactionLink {
  if (!link) throw notFound('Satisfaction link');
  if (link.usedAt) throw conflict('This satisfaction form was already answered');
  if (link.expiresAt.getTime() <= Date.now()) throw gone('This satisfaction link has expired');
  return link;
}

/** The spec leaves this payload open (docs/webhooks/satisfaction-events.md). */
async function submissionPayload(db: Db, link: SatisfactionLink, submission: SatisfactionSubmission) {
  const creator = await findUser(db, link.companyId, link.createdById);
  const kind = link.recordType as 'lead' | 'deal' | 'delivery';
  const record = await store.recordBrief(db, kind, link.companyId, link.recordId);
  const [lead, deal, delivery] = [kind === 'lead' ? record : null, kind === 'deal' ? record : null, kind === 'delivery' ? record : null];
  return {
    submission: {
      id: submission.id,
      score: submission.score,
      max_score: link.maxScore,
      comment: submission.comment ?? null,
      submitted_at: iso(submission.submittedAt),
    },
    link: { id: link.id, created_at: iso(link.createdAt), expires_at: iso(link.expiresAt), created_by: userSummary(creator) },
    form: formOf(link),
    record_type: link.recordType,
    crm_lead: lead ? { id: lead.id, title: lead.title, code: lead.code } : null,
    crm_deal: deal ? { id: deal.id, title: deal.title, code: deal.code } : null,
    crm_delivery: delivery ? { id: delivery.id, title: delivery.title, code: delivery.code, status: delivery.status } : null,
  };
}
