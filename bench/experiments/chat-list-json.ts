/**
 * Decision 0240's experiment (not part of bench:all): chat's list page built as JSON text by Postgres
 * (json_build_object / json_agg, the spec's names and formats) against today's path (`pg` rows, `chatSummaryView`,
 * JSON.stringify), in one process over the bench's 10,000 chats, the two taking turns in rounds. It checks the two
 * bodies are JSON-equal, then prints per page the wall time and this process's CPU. The JSON statement covers
 * WhatsApp chats with nothing from crm (no person, participants, agent or last message), which is what the bench
 * seeds. `EXP_PRINT=1` prints the first page's statement with its values inlined, for pgbench.
 *
 * Database: a fresh one migrated by `DATABASE_URL=… npx tsx services/chat/src/migrate.ts`, with one WhatsApp number
 * (id …aa, company …01) and the chats bench/chat/bench.ts writes, then analyzed.
 * Run: `EXP_DB=postgres://… npx tsx bench/experiments/chat-list-json.ts` (EXP_N requests a turn, EXP_ROUNDS rounds, EXP_CONCURRENCY in flight).
 */
import pg from 'pg';
import { encodeCursor, planList } from '../../services/chat/src/chats/chat.list.js';
import { listChats } from '../../services/chat/src/chats/chat.store.js';
import { chatSummaryView } from '../../services/chat/src/chats/chat.view.js';

const COMPANY = process.env.EXP_COMPANY ?? '0190a0a0-0000-7000-8000-000000000001';
const TAKE = 50;
const pool = new pg.Pool({
  connectionString: process.env.EXP_DB,
  max: Number(process.env.EXP_CONCURRENCY ?? 1),
  options: '-c search_path=chat',
});

const ts = (x: string) => `to_char((${x}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24":"MI":"SS.MS"Z"')`;
// The WhatsApp summary of a chat with nothing from crm (no person, participants, agent or last message), as the
// bench's chats are; a chat with any of those would need crm's parts spliced into the text.
const record = `json_build_object('id', c.id, 'status', c.status, 'priority', c.priority, 'channel_type', c.channel_type,
  'chat_type', c.chat_type, 'crm_person', null, 'unread_count', c.unread_count, 'is_manually_unread', c.is_manually_unread,
  'archived_at', ${ts('c.archived_at')}, 'last_customer_msg_at', ${ts('c.last_customer_msg_at')},
  'session_expires_at', ${ts("c.last_customer_msg_at + interval '24 hours'")},
  'can_send_open_message', coalesce(c.last_customer_msg_at + interval '24 hours' > now(), false),
  'last_activity_at', ${ts('c.last_activity_at')}, 'created_at', ${ts('c.created_at')}, 'updated_at', ${ts('c.updated_at')},
  'participants', '[]'::json, 'assigned_agent', null, 'has_pending_copilot_actions', false, 'pending_copilot_actions_count', 0,
  'channel_account_id', c.channel_account_id, 'last_message', null, 'crm_marketing_lead_source', '[]'::json,
  'phone_number', json_build_object('id', n.id, 'display_number', n.display_number, 'raw_number', n.raw_number, 'phone_number_id', n.phone_number_id),
  'wa_contact_id', c.wa_contact_id, 'contact_name', c.contact_name, 'contact_number', c.contact_number, 'remote_profile_name', c.remote_profile_name,
  'channel_account', json_build_object('id', n.id, 'type', 'WHATSAPP', 'display_name', coalesce(n.verified_name, n.display_number), 'provider_status', n.provider_status),
  'external_contact', json_build_object('id', c.wa_contact_id, 'handle', c.contact_number, 'display_name', coalesce(c.remote_profile_name, c.contact_name), 'avatar_url', null),
  'legacy', json_build_object('whatsapp_chat_id', c.id, 'whatsapp_phone_id', n.id, 'wa_contact_id', c.wa_contact_id),
  'ai_attendance', json_build_object('is_active', c.ai_agent_id is not null, 'whatsapp_ai_agent_id', c.ai_agent_id, 'ai_messages_count', c.ai_message_count))`;

function jsonStatement(where: string, values: unknown[], after?: { t: string; i: string }) {
  const v = [...values];
  let w = where;
  if (after) {
    v.push(after.t, after.i);
    w += ` and (c.last_activity_at, c.id) < ($${v.length - 1}::timestamptz, $${v.length}::uuid)`;
  }
  v.push(TAKE + 1);
  const text = `with page as (select c.*, c.last_activity_at::text as key, row_number() over (order by c.last_activity_at desc, c.id desc) as r
      from chats c where ${w} order by c.last_activity_at desc, c.id desc limit $${v.length})
    select (select count(*)::int from chats c where ${where}) as total,
      (select coalesce(json_agg(${record} order by c.r), '[]') from page c left join whatsapp_numbers n on n.id = c.channel_account_id where c.r <= ${TAKE})::text as records,
      (select json_build_object('t', key, 'i', id) from page where r = ${TAKE} and exists (select 1 from page where r = ${TAKE + 1})) as next`;
  return { name: `exp_json_${after ? 'deep' : 'first'}`, text, values: v };
}

async function viaRows(after?: { t: string; i: string }) {
  const page = await listChats(pool, planList(COMPANY, {}, null), { take: TAKE, after, skip: 0 });
  const rows = page.rows.slice(0, TAKE);
  const last = rows[rows.length - 1];
  const next = page.rows.length > TAKE && last ? encodeCursor({ t: last.activityKey, i: last.id }) : null;
  const l = { persons: new Map(), users: new Map() };
  return JSON.stringify({ total: page.total, records: rows.map((c) => chatSummaryView(c, l)), next_cursor: next });
}

async function viaJson(after?: { t: string; i: string }) {
  const plan = planList(COMPANY, {}, null);
  const { rows } = await pool.query(jsonStatement(plan.where, plan.values, after));
  const r = rows[0];
  return `{"total":${r.total},"records":${r.records},"next_cursor":${r.next ? JSON.stringify(encodeCursor(r.next)) : 'null'}}`;
}

/** EXP_CONCURRENCY requests in flight (pool connections alike): pages/s, and this process's CPU per page. */
async function measure(fn: () => Promise<string>, n: number) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let left = n;
  const worker = async () => {
    while (left-- > 0) await fn();
  };
  await Promise.all(Array.from({ length: Number(process.env.EXP_CONCURRENCY ?? 1) }, worker));
  const ms = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  return { wallMs: ms / n, rate: (n * 1000) / ms, nodeCpuMs: (c.user + c.system) / 1000 / n };
}

const deepCursor = async () => {
  let after: { t: string; i: string } | undefined;
  for (let p = 1; p < 150; p++) {
    const body = JSON.parse(await viaRows(after));
    after = JSON.parse(Buffer.from(body.next_cursor, 'base64url').toString());
  }
  return after;
};

if (process.env.EXP_PRINT) {
  const plan = planList(COMPANY, {}, null);
  const st = jsonStatement(plan.where, plan.values);
  const lit = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v)}'`);
  console.log(`${st.text.replace(/\$(\d+)/g, (_, i) => lit(st.values[Number(i) - 1])).replace(/\s+/g, ' ')};`);
  process.exit(0);
}
const deep = await deepCursor();
for (const [label, at] of [
  ['first page', undefined],
  ['page 150', deep],
] as const) {
  const a = JSON.parse(await viaRows(at));
  const b = JSON.parse(await viaJson(at));
  const now = (x: unknown) => JSON.stringify(x);
  console.log(`${label}: JSON-equal ${now(a) === now(b)} (bytes ${now(a).length} vs ${(await viaJson(at)).length})`);
  if (now(a) !== now(b)) console.log(now(a.records[0]), '\n', now(b.records[0]));
}
const N = Number(process.env.EXP_N ?? 200);
for (let round = 1; round <= Number(process.env.EXP_ROUNDS ?? 4); round++) {
  for (const [label, at] of [
    ['first', undefined],
    ['p150', deep],
  ] as const) {
    const a = await measure(() => viaRows(at), N);
    const b = await measure(() => viaJson(at), N);
    console.log(
      `round ${round} ${label}: rows+views ${a.rate.toFixed(1)} pages/s ${a.wallMs.toFixed(3)} ms (node CPU ${a.nodeCpuMs.toFixed(3)}) | pg JSON ${b.rate.toFixed(1)} pages/s ${b.wallMs.toFixed(3)} ms (node CPU ${b.nodeCpuMs.toFixed(3)})`,
    );
  }
}
await pool.end();
