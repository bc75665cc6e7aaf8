/**
 * Decisions 0250–0251 (not part of bench:all): where chat's own CPU goes on a list page, in one process over the
 * bench's 10,000 chats: the statement with `pg`'s parsing (timestamps kept as Postgres's text, as the service's pool
 * does, decision 0250), the 50 views (`chatSummaryView`), and the body's JSON by `JSON.stringify` and, when
 * `EXP_FJS` names a directory where `fast-json-stringify` is installed, by a schema-compiled serializer of the
 * WhatsApp record (checked byte-equal first).
 *
 * Database: as for chat-list-json.ts (decision 0240): a fresh one migrated by `DATABASE_URL=… npx tsx
 * services/chat/src/migrate.ts`, one WhatsApp number (id …aa, company …01) and the chats bench/chat/bench.ts writes.
 * Run: `EXP_DB=postgres://… [EXP_FJS=/tmp/fjs] npx tsx bench/experiments/chat-list-node-cpu.ts` (EXP_N pages a round).
 */
import { createRequire } from 'node:module';
import pg from 'pg';
import { planList } from '../../services/chat/src/chats/chat.list.js';
import { listChats } from '../../services/chat/src/chats/chat.store.js';
import { chatSummaryView } from '../../services/chat/src/chats/chat.view.js';

const COMPANY = process.env.EXP_COMPANY ?? '0190a0a0-0000-7000-8000-000000000001';
const types = new pg.TypeOverrides();
// MikroORM's pool (the service's) keeps date, timestamp, timestamptz and interval as Postgres's text.
for (const oid of [1082, 1114, 1184, 1186]) types.setTypeParser(oid, (s: string) => s);
const pool = new pg.Pool({ connectionString: process.env.EXP_DB, max: 1, options: '-c search_path=chat', types });

type Serializer = (body: unknown) => string;
function schemaSerializer(): Serializer | null {
  if (!process.env.EXP_FJS) return null;
  const fjs = createRequire(`${process.env.EXP_FJS}/`)('fast-json-stringify') as (schema: unknown) => Serializer;
  const S = { type: 'string' };
  const NS = { type: ['string', 'null'] };
  const INT = { type: 'integer' };
  const BOOL = { type: 'boolean' };
  const obj = (properties: Record<string, unknown>) => ({ type: 'object', properties });
  const record = obj({
    id: S,
    status: S,
    priority: INT,
    channel_type: S,
    chat_type: S,
    crm_person: {},
    unread_count: INT,
    is_manually_unread: BOOL,
    archived_at: NS,
    last_customer_msg_at: NS,
    session_expires_at: NS,
    can_send_open_message: BOOL,
    last_activity_at: NS,
    created_at: NS,
    updated_at: NS,
    participants: { type: 'array', items: {} },
    assigned_agent: {},
    has_pending_copilot_actions: BOOL,
    pending_copilot_actions_count: INT,
    channel_account_id: S,
    last_message: {},
    crm_marketing_lead_source: { type: 'array', items: {} },
    phone_number: obj({ id: S, display_number: S, raw_number: S, phone_number_id: S }),
    wa_contact_id: NS,
    contact_name: NS,
    contact_number: NS,
    remote_profile_name: NS,
    channel_account: obj({ id: S, type: S, display_name: NS, provider_status: S }),
    external_contact: obj({ id: NS, handle: NS, display_name: NS, avatar_url: NS }),
    legacy: obj({ whatsapp_chat_id: S, whatsapp_phone_id: S, wa_contact_id: NS }),
    ai_attendance: obj({ is_active: BOOL, whatsapp_ai_agent_id: NS, ai_messages_count: INT }),
  });
  return fjs(obj({ total: INT, records: { type: 'array', items: record }, next_cursor: NS }));
}

const lookups = { persons: new Map(), users: new Map() };
const plan = planList(COMPANY, {}, null);
const serialize = schemaSerializer();
let page = await listChats(pool, plan, { take: 50, skip: 0 });
const views = () => page.rows.slice(0, 50).map((r) => chatSummaryView(r, lookups));
const sample = { total: page.total, records: views(), next_cursor: 'cursor' };
if (serialize) console.log(`schema serializer byte-equal to JSON.stringify: ${serialize(sample) === JSON.stringify(sample)}`);
const N = Number(process.env.EXP_N ?? 400);
const perPageMs = (work: () => unknown) => {
  const t = performance.now();
  for (let i = 0; i < N; i++) work();
  return ((performance.now() - t) / N).toFixed(3);
};
for (let round = 1; round <= 4; round++) {
  const cpu = process.cpuUsage();
  for (let i = 0; i < N; i++) page = await listChats(pool, plan, { take: 50, skip: 0 });
  const c = process.cpuUsage(cpu);
  const query = ((c.user + c.system) / 1000 / N).toFixed(3);
  const view = perPageMs(views);
  const body = { total: page.total, records: views(), next_cursor: 'cursor' };
  const native = perPageMs(() => JSON.stringify(body));
  const schema = serialize ? ` | fast-json-stringify ${perPageMs(() => serialize(body))} ms` : '';
  console.log(`round ${round}: statement + pg parsing ${query} ms CPU | 50 views ${view} ms | JSON.stringify ${native} ms${schema}`);
}
await pool.end();
