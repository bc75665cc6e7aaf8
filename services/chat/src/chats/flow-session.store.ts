import { type Stored, tableOf } from '@svc/platform/db/entity-table';
import type { Queryable } from '@svc/platform/db/native';
import { FlowSession } from './chat.entity.js';

export type StoredFlowSession = Stored<FlowSession>;
const FLOW = tableOf(FlowSession);
const NEW_FLOW = FLOW.columnList([
  'id',
  'companyId',
  'chatId',
  'flowId',
  'flowName',
  'status',
  'startedAt',
  'lastActivityAt',
  'finishedAt',
  'currentStep',
]);

export async function flowSessionsOfChat(db: Queryable, companyId: string, chatId: string): Promise<StoredFlowSession[]> {
  const { rows } = await db.query<StoredFlowSession>({
    name: 'flow_sessions_of_chat',
    text: `select ${FLOW.select('f')} from flow_sessions f where f.company_id = $1 and f.chat_id = $2 order by f.started_at desc, f.id desc`,
    values: [companyId, chatId],
  });
  return rows;
}

export async function insertFlowSession(
  db: Queryable,
  f: Pick<StoredFlowSession, 'id' | 'companyId' | 'chatId' | 'flowId' | 'flowName' | 'status' | 'currentStep'> & {
    finishedAt: Date | null;
  },
): Promise<void> {
  await db.query(
    `insert into flow_sessions (${NEW_FLOW})
     values ($1, $2, $3, $4, $5, $6, now(), now(), $7, $8)`,
    [f.id, f.companyId, f.chatId, f.flowId, f.flowName, f.status, f.finishedAt, f.currentStep],
  );
}
