import { eventsRecorded } from '@svc/platform/events/outbox';
import type { CrmPeer } from '@svc/platform/peers/crm';
import { planValidAt } from '@svc/platform/peers/crm';
import { v7 as uuidv7 } from 'uuid';
import type { RecordIndex } from '../links/crm-records.js';
import type { Queryable, TaskRead } from './task.store.js';
import { taskSnapshot } from './task.view.js';

/**
 * `task.completed` (the spec names the event, not its payload): `{task, completed_by, completed_at}` where
 * `task` is the Task resource as GET /tasks/{id} shows it, less the fields that depend on who is looking (the
 * meeting_can_* and meeting_self_* eligibility), `completed_by` the UserSummary `{id, name, avatar}` of the
 * user who completed it and `completed_at` the same instant as `task.completed_at`. It fires whenever a task
 * becomes completed: created in a completion stage, moved to one, or updated with `completed: true`; a task
 * reopened and completed again fires it again.
 */
export function taskCompletedPayload(r: TaskRead, idx: RecordIndex): Record<string, unknown> {
  const task = taskSnapshot(r, idx);
  return { task, completed_by: task.completed_by, completed_at: task.completed_at };
}

/**
 * Writes events to the tasks outbox on the caller's transaction client, as the platform's recordEvents does
 * through the ORM: one bound-parameter insert; the relay of this process is woken once the transaction commits. Events are
 * issued only while the company's plan is valid (asked of crm, which owns it; cached 2 s).
 */
export async function recordTaskEvents(
  db: Queryable,
  crm: CrmPeer,
  schema: string,
  events: { companyId: string; eventKey: string; payload: Record<string, unknown> }[],
): Promise<void> {
  const now = new Date();
  const open = new Map<string, boolean>();
  for (const companyId of new Set(events.map((e) => e.companyId))) open.set(companyId, planValidAt(await crm.getCompany(companyId), now));
  const issued = events.filter((e) => open.get(e.companyId));
  if (!issued.length) return;
  await db.query({
    name: 'tasks_outbox_insert',
    text: `insert into outbox (id, company_id, event_key, payload, occurred_at, published_at)
      select id, company_id, event_key, payload, $5, null from unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[]) as e(id, company_id, event_key, payload)`,
    values: [
      issued.map(() => uuidv7()),
      issued.map((e) => e.companyId),
      issued.map((e) => e.eventKey),
      issued.map((e) => JSON.stringify(e.payload)),
      now,
    ],
  });
  eventsRecorded(db, schema);
}
