import { iso } from '@svc/platform/http/json';
import type { RecordIndex, RecordRefs } from '../links/crm-records.js';
import type { TaskRead } from './task.store.js';

/**
 * The spec's Task resource. Every field of its table is present; what this system cannot fill yet (calendar
 * sync, recordings, AI processing, mentions, comments) is null, false or empty,
 * never invented. See the README's Tasks section for what each derived field means.
 */

/** The origin of tasks created here: the spec's "the service" value, with the neutral brand name. */
export const NATIVE_ORIGIN = 'SVC';

/** Who is looking: the actor's e-mail (for meeting self-attendance) and what the key may do. */
export interface Viewer {
  userId: string;
  email: string | null;
  canUpdate: boolean;
}

/** The crm records a task points at, for the summaries asked of crm. */
export function addRefsOf(refs: RecordRefs, t: TaskRead['task']): RecordRefs {
  refs.add('user', t.responsible_id).add('user', t.created_by_id).add('user', t.completed_by_id);
  refs.add('lead', t.crm_lead_id).add('deal', t.crm_deal_id).add('person', t.crm_person_id).add('organization', t.crm_organization_id);
  refs.add('delivery', t.crm_delivery_id).add('customer', t.crm_customer_id);
  for (const tag of t.tag_ids) refs.add('tag', tag);
  return refs;
}

const userSummary = (idx: RecordIndex, id: string | null) => {
  if (!id) return null;
  const u = idx.users.get(id);
  return u ? { id: u.id, name: u.name, avatar: u.avatar ?? null } : null;
};

export type TaskView = ReturnType<typeof taskSnapshot> & ReturnType<typeof actorFields> & { subtasks?: TaskView[] };

/** The task as events carry it: everything but the fields that depend on who is looking. */
export function taskSnapshot(r: TaskRead, idx: RecordIndex) {
  const t = r.task;
  const lead = t.crm_lead_id ? idx.leads.get(t.crm_lead_id) : undefined;
  const deal = t.crm_deal_id ? idx.deals.get(t.crm_deal_id) : undefined;
  const delivery = t.crm_delivery_id ? idx.deliveries.get(t.crm_delivery_id) : undefined;
  const person = t.crm_person_id ? idx.persons.get(t.crm_person_id) : undefined;
  const organization = t.crm_organization_id ? idx.organizations.get(t.crm_organization_id) : undefined;
  const customer = t.crm_customer_id ? idx.customers.get(t.crm_customer_id) : undefined;
  const s = r.series;
  return {
    id: t.id,
    title: t.title,
    description: t.description,
    is_personal: t.is_personal,
    priority: t.priority,
    start_date: iso(t.start_date),
    end_date: iso(t.end_date),
    completed_at: iso(t.completed_at),
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
    has_time: t.has_time,
    meeting_outcome: t.meeting_outcome,
    meeting_outcome_notes: t.meeting_outcome_notes,
    ai_processed: false,
    ai_status: null,
    ai_error_log: null,
    ai_last_action: null,
    ai_generated: false,
    crm_task_type_id: t.task_type_id,
    crm_task_stage_id: t.task_stage_id,
    crm_lead_id: t.crm_lead_id,
    crm_deal_id: t.crm_deal_id,
    crm_delivery_id: t.crm_delivery_id,
    crm_person_id: t.crm_person_id,
    crm_organization_id: t.crm_organization_id,
    crm_customer_id: t.crm_customer_id,
    responsible_id: t.responsible_id,
    parent_task_id: t.parent_task_id,
    recurrence_series_id: t.recurrence_series_id,
    recurrence_index: t.recurrence_index,
    recurrence_is_exception: t.recurrence_is_exception,
    is_recurring: t.recurrence_series_id !== null,
    recurrence: s
      ? {
          id: s.id,
          pattern: s.pattern,
          interval: s.interval,
          week_days: s.week_days,
          end_type: s.end_type,
          start_date: iso(s.start_date),
          end_date: iso(s.end_date),
          until_date: iso(s.until_date),
          occurrences: s.occurrences,
          index: t.recurrence_index,
          is_exception: t.recurrence_is_exception,
        }
      : null,
    created_by: userSummary(idx, t.created_by_id),
    completed_by: userSummary(idx, t.completed_by_id),
    responsible: userSummary(idx, t.responsible_id),
    crm_task_type: { id: r.type.id, name: r.type.name, icon: r.type.icon, is_meeting: r.type.is_meeting },
    crm_task_stage: {
      id: r.stage.id,
      name: r.stage.name,
      color: r.stage.color,
      is_completion: r.stage.is_completion,
      position: r.stage.position,
    },
    // A linked record the viewer may not see (a private lead) keeps its id but shows no summary.
    crm_lead: lead ? { id: lead.id, title: lead.title, code: lead.code } : null,
    crm_deal: deal ? { id: deal.id, title: deal.title, code: deal.code } : null,
    crm_delivery: delivery ? { id: delivery.id, title: delivery.title, code: delivery.code, status: delivery.status } : null,
    crm_person: person ? { id: person.id, name: person.name } : null,
    crm_organization: organization ? { id: organization.id, name: organization.name, legal_name: organization.legal_name ?? null } : null,
    crm_customer: customer
      ? {
          id: customer.id,
          code: customer.code,
          type: customer.type,
          status: customer.status,
          person: customer.person ? { id: customer.person.id, name: customer.person.name } : null,
          organization: customer.organization
            ? { id: customer.organization.id, name: customer.organization.name, legal_name: customer.organization.legal_name ?? null }
            : null,
        }
      : null,
    mentions: [] as never[],
    recordings: [] as never[],
    reminders_minutes: t.reminders_minutes,
    meeting_link: null,
    meeting_location: t.meeting_location,
    meeting_description: t.meeting_description,
    calendar_event_url: null,
    meeting_participants: t.meeting_participants,
    meeting_provider: t.meeting_provider,
    provider: t.meeting_provider,
    meeting_mode: t.meeting_mode,
    sync_warning: null,
    origin: t.origin,
    is_actionable: t.completed_at === null,
    hierarchy_level: t.parent_task_id ? 1 : 0,
    is_subtask: t.parent_task_id !== null,
    parent_task: r.parent,
    tags: t.tag_ids.flatMap((id) => {
      const tag = idx.tags.get(id);
      if (!tag) return [];
      const color =
        tag.color_background || tag.color_foreground
          ? { background: tag.color_background ?? null, foreground: tag.color_foreground ?? null }
          : null;
      return [{ id: tag.id, name: tag.name, color }];
    }),
    calendar_lifecycle_status: null,
    meeting_event: null,
    meeting_sync: null,
    sync: null,
    meeting_attendees: [] as never[],
    attendees: [] as never[],
    meeting_recorder_sessions: [] as never[],
    comments: [] as never[],
  };
}

/**
 * The actor's invitation-response eligibility. Participants are stored, but no calendar invitation is sent
 * (no calendar provider is connected), so there is nothing to respond to: `meeting_can_respond` is false and
 * the response fields are null. The actor is a participant when their e-mail is among the participants.
 */
function actorFields(r: TaskRead, viewer: Viewer) {
  const t = r.task;
  const self = viewer.email && t.meeting_participants.includes(viewer.email.toLowerCase()) ? viewer.email.toLowerCase() : null;
  return {
    meeting_can_manage_participants: r.type.is_meeting && viewer.canUpdate,
    meeting_can_respond: false,
    meeting_self_attendee_email: self,
    meeting_self_response_status: null,
    meeting_response: null,
  };
}

export function taskView(r: TaskRead, idx: RecordIndex, viewer: Viewer, subtasks?: TaskView[]): TaskView {
  const view: TaskView = { ...taskSnapshot(r, idx), ...actorFields(r, viewer) };
  if (subtasks) view.subtasks = subtasks;
  return view;
}
