import { iso } from '@svc/platform/http/json';
import type { RecordIndex, RecordRefs } from '../links/crm-records.js';
import type { TaskRead } from './task.store.js';

/** What this system cannot fill yet is null, false or empty, never invented. */

/** The spec's "the service" value, with the neutral brand name. */
export const NATIVE_ORIGIN = 'SVC';

/** Who is looking: the actor's e-mail (for meeting self-attendance) and what the key may do. */
export interface Viewer {
  userId: string;
  email: string | null;
  canUpdate: boolean;
}

/** The crm records a task points at, for the summaries asked of crm. */
export function addRefsOf(refs: RecordRefs, t: TaskRead['task']): RecordRefs {
  refs.add('user', t.responsibleId).add('user', t.createdById).add('user', t.completedById);
  refs.add('lead', t.crmLeadId).add('deal', t.crmDealId).add('person', t.crmPersonId).add('organization', t.crmOrganizationId);
  refs.add('delivery', t.crmDeliveryId).add('customer', t.crmCustomerId);
  for (const tag of t.tagIds) refs.add('tag', tag);
  return refs;
}

const userSummary = (idx: RecordIndex, id: string | null | undefined) => {
  if (!id) return null;
  const u = idx.users.get(id);
  return u ? { id: u.id, name: u.name, avatar: u.avatar ?? null } : null;
};

export type TaskView = ReturnType<typeof taskSnapshot> & ReturnType<typeof actorFields> & { subtasks?: TaskView[] };

/** The task as events carry it: everything but the fields that depend on who is looking. */
export function taskSnapshot(r: TaskRead, idx: RecordIndex) {
  const t = r.task;
  const lead = t.crmLeadId ? idx.leads.get(t.crmLeadId) : undefined;
  const deal = t.crmDealId ? idx.deals.get(t.crmDealId) : undefined;
  const delivery = t.crmDeliveryId ? idx.deliveries.get(t.crmDeliveryId) : undefined;
  const person = t.crmPersonId ? idx.persons.get(t.crmPersonId) : undefined;
  const organization = t.crmOrganizationId ? idx.organizations.get(t.crmOrganizationId) : undefined;
  const customer = t.crmCustomerId ? idx.customers.get(t.crmCustomerId) : undefined;
  const s = r.series;
  return {
    id: t.id,
    title: t.title,
    description: t.description,
    is_personal: t.isPersonal,
    priority: t.priority,
    start_date: iso(t.startDate),
    end_date: iso(t.endDate),
    completed_at: iso(t.completedAt),
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    has_time: t.hasTime,
    meeting_outcome: t.meetingOutcome,
    meeting_outcome_notes: t.meetingOutcomeNotes,
    ai_processed: false,
    ai_status: null,
    ai_error_log: null,
    ai_last_action: null,
    ai_generated: false,
    crm_task_type_id: t.taskTypeId,
    crm_task_stage_id: t.taskStageId,
    crm_lead_id: t.crmLeadId,
    crm_deal_id: t.crmDealId,
    crm_delivery_id: t.crmDeliveryId,
    crm_person_id: t.crmPersonId,
    crm_organization_id: t.crmOrganizationId,
    crm_customer_id: t.crmCustomerId,
    responsible_id: t.responsibleId,
    parent_task_id: t.parentTaskId,
    recurrence_series_id: t.recurrenceSeriesId,
    recurrence_index: t.recurrenceIndex,
    recurrence_is_exception: t.recurrenceIsException,
    is_recurring: t.recurrenceSeriesId != null,
    recurrence: s
      ? {
          id: s.id,
          pattern: s.pattern,
          interval: s.interval,
          week_days: s.weekDays,
          end_type: s.endType,
          start_date: iso(s.startDate),
          end_date: iso(s.endDate),
          until_date: iso(s.untilDate),
          occurrences: s.occurrences,
          index: t.recurrenceIndex,
          is_exception: t.recurrenceIsException,
        }
      : null,
    created_by: userSummary(idx, t.createdById),
    completed_by: userSummary(idx, t.completedById),
    responsible: userSummary(idx, t.responsibleId),
    crm_task_type: { id: r.type.id, name: r.type.name, icon: r.type.icon, is_meeting: r.type.isMeeting },
    crm_task_stage: {
      id: r.stage.id,
      name: r.stage.name,
      color: r.stage.color,
      is_completion: r.stage.isCompletion,
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
    reminders_minutes: t.remindersMinutes,
    meeting_link: null,
    meeting_location: t.meetingLocation,
    meeting_description: t.meetingDescription,
    calendar_event_url: null,
    meeting_participants: t.meetingParticipants,
    meeting_provider: t.meetingProvider,
    provider: t.meetingProvider,
    meeting_mode: t.meetingMode,
    sync_warning: null,
    origin: t.origin,
    is_actionable: t.completedAt == null,
    hierarchy_level: t.parentTaskId ? 1 : 0,
    is_subtask: t.parentTaskId != null,
    parent_task: r.parent,
    tags: t.tagIds.flatMap((id) => {
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

/** No calendar invitation is sent, so there is nothing to respond to. */
function actorFields(r: TaskRead, viewer: Viewer) {
  const t = r.task;
  const self = viewer.email && t.meetingParticipants.includes(viewer.email.toLowerCase()) ? viewer.email.toLowerCase() : null;
  return {
    meeting_can_manage_participants: r.type.isMeeting && viewer.canUpdate,
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
