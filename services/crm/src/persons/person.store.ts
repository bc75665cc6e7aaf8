import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import { Deal } from '../deals/deal.entity.js';
import { Lead } from '../leads/lead.entity.js';

/** The leads and deals a person takes part in (what the chat context shows of a person besides its contacts). */

const RECORD_COLUMNS = ['id', 'title', 'status'] as const;
export type PersonRecordRow = Pick<Lead, (typeof RECORD_COLUMNS)[number]> & { archived: boolean };

const recordsOf = (kind: 'lead' | 'deal') =>
  statement(
    `person_${kind}s_for_chat`,
    `select ${(kind === 'lead' ? tableOf(Lead) : tableOf(Deal)).select('r', RECORD_COLUMNS)}, r.archived_at is not null as archived
     from ${kind}_participants x join ${kind}s r on r.id = x.${kind}_id
     where x.company_id = $1 and x.person_id = $2 order by r.created_at, r.id`,
  );
const LEADS_OF = recordsOf('lead');
const DEALS_OF = recordsOf('deal');

/** A person's leads and deals, oldest first. */
export async function recordsOfPerson(db: Db, companyId: string, personId: string) {
  const leads = await run<PersonRecordRow>(db, LEADS_OF, [companyId, personId]);
  const deals = await run<PersonRecordRow>(db, DEALS_OF, [companyId, personId]);
  return { leads, deals };
}
