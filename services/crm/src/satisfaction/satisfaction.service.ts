import { createHash, randomBytes } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import { nativePool } from '@svc/platform/db/native';
import type { EntityManager } from '@svc/platform/db/orm';
import { conflict, gone, invalidField, notFound } from '@svc/platform/errors';
import { iso } from '@svc/platform/http/json';
import type { ServiceContext } from '@svc/platform/service';
import { RecordType } from '@svc/proto/crm/v1/records';
import { v7 as uuidv7 } from 'uuid';
import { User } from '../companies/company.entity.js';
import { Deal } from '../deals/deal.entity.js';
import { Delivery } from '../deliveries/delivery.entity.js';
import { Lead } from '../leads/lead.entity.js';
import { RecordSummaries } from '../records/record.service.js';
import { userSummary } from '../sales/sales.summaries.js';
import { SatisfactionLink, SatisfactionSubmission } from './satisfaction.entity.js';
import type { CreateLinkBody, SubmissionBody } from './satisfaction.schema.js';

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

/**
 * Satisfaction links and their public submissions (decision 0082). A link names one lead, deal or delivery the
 * key's creator may see; its token (256 random bits, only its SHA-256 stored) is good for one submission until it
 * expires. The submission and `satisfaction.public_submission_created` are written in one transaction, with the link
 * locked, so a token answered twice at once is answered once.
 */
export class Satisfaction {
  private readonly summaries: RecordSummaries;

  constructor(private readonly ctx: ServiceContext) {
    this.summaries = new RecordSummaries(() => nativePool(ctx.orm));
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
    const em = this.ctx.orm.em.fork();
    const link = em.create(SatisfactionLink, {
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
    });
    await em.flush();
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
    return usable(await this.ctx.orm.em.fork().findOne(SatisfactionLink, { tokenHash: hashOf(token) }));
  }

  /** Records the answer and fires `satisfaction.public_submission_created` (payload: submissionPayload). */
  async submit(token: string, body: SubmissionBody) {
    return this.ctx.orm.em.fork().transactional(async (tx) => {
      const link = usable(await tx.findOne(SatisfactionLink, { tokenHash: hashOf(token) }, { lockMode: LockMode.PESSIMISTIC_WRITE }));
      if (body.score < 1 || body.score > link.maxScore) throw invalidField('score', `must be an integer from 1 to ${link.maxScore}`);
      const now = new Date();
      link.usedAt = now;
      const submission = tx.create(SatisfactionSubmission, {
        id: uuidv7(),
        companyId: link.companyId,
        linkId: link.id,
        score: body.score,
        comment: body.comment ?? null,
        submittedAt: now,
      });
      const payload = await submissionPayload(tx, link, submission);
      await this.ctx.outbox.record(tx, [{ companyId: link.companyId, eventKey: 'satisfaction.public_submission_created', payload }]);
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

/**
 * `satisfaction.public_submission_created` (the spec leaves it open; docs/webhooks/satisfaction-events.md):
 * `{submission, link, form, record_type, crm_lead, crm_deal, crm_delivery}`. The record is summarized as tasks
 * show it (`{id, title, code}`, a delivery with its `status`), null for the two kinds it is not.
 */
async function submissionPayload(em: EntityManager, link: SatisfactionLink, submission: SatisfactionSubmission) {
  const where = { id: link.recordId, companyId: link.companyId };
  const [creator, lead, deal, delivery] = await Promise.all([
    em.findOne(User, { id: link.createdById, companyId: link.companyId }),
    link.recordType === 'lead' ? em.findOne(Lead, where) : null,
    link.recordType === 'deal' ? em.findOne(Deal, where) : null,
    link.recordType === 'delivery' ? em.findOne(Delivery, where) : null,
  ]);
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
