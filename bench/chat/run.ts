/**
 * `npm run bench:chat`: GET /chats over 10,000 chats of one company (the first page and a page deep behind a cursor)
 * and POST /chats/{id}/messages against the fake Graph server, through the gateway against the whole system run as
 * processes. Each is printed next to a ceiling measured in the same run: pgbench of the very list statements chat
 * sends (its CHAT_SELECT and planList), and the bare round trip to the fake provider. Prints, never asserts. See
 * bench/chat/README.md.
 *
 * Knobs (environment): BENCH_CONNECTIONS (8), BENCH_DURATION (8 s), BENCH_WARMUP (2 s), BENCH_ONE_DURATION (5 s),
 * BENCH_CHATS (10000), BENCH_DEEP_PAGE (150: the cursor page measured, 50 chats a page).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { CHAT_SELECT, planList } from '@svc/chat';
import { FakeGraph } from '@svc/chat/testing';
import { AdminClient } from '../../scripts/demo.js';
import { launchStack, REPO_ROOT, type Stack } from '../../scripts/stack.js';
import { coresBusy, formatCores, snapshot } from '../lib/cpu.js';
import { adminQuery, createDatabase, databaseUrl, NATS_URL, REDIS_URL, releaseResources, runBench } from '../lib/infra.js';
import { type LoadResult, measure } from '../lib/load.js';
import { bound, lit, pgbench } from '../lib/pgbench.js';
import { seed } from '../lib/seed.js';

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};
const C = num('BENCH_CONNECTIONS', 8);
const DURATION = num('BENCH_DURATION', 8);
const WARMUP = num('BENCH_WARMUP', 2);
const ONE_DURATION = num('BENCH_ONE_DURATION', 5);
const CHATS = num('BENCH_CHATS', 10_000);
const DEEP_PAGE = num('BENCH_DEEP_PAGE', 150);
const TAKE = 50;

const runId = `${Date.now()}`;
const database = `svc_bench_chat_${runId}`;
const natsStream = `BENCHCHAT_${runId}`;
const subjectPrefix = `benchchat${runId}`;
const redisPrefix = `benchchat${runId}:`;
const outDir = path.join(REPO_ROOT, '.data', 'bench-chat', runId);

const say = (s = '') => process.stdout.write(`${s}\n`);
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');

let stack: Stack | undefined;
let graph: FakeGraph | undefined;
const run = { database, databaseCreated: false, natsStream, redisPrefix };

function cpuTargets() {
  const pids: Record<string, number | undefined> = { bench: process.pid };
  if (stack) for (const [name, pid] of Object.entries(stack.pids)) pids[name] = pid;
  return { pids, comms: ['postgres', 'redis-server', 'nats-server'] };
}

async function phase<T>(work: () => Promise<T>): Promise<{ value: T; cores: Record<string, number> }> {
  const before = snapshot(cpuTargets());
  const value = await work();
  return { value, cores: coresBusy(before, snapshot(cpuTargets())) };
}

const header = () => say(`  ${''.padEnd(62)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
function line(
  label: string,
  r: { rate: number; p50us: number; p99us: number; unexpected?: number; statuses?: Record<string, number> },
  cores?: Record<string, number>,
) {
  const bad = r.unexpected ? `   UNEXPECTED: ${r.unexpected} (statuses ${JSON.stringify(r.statuses)})` : '';
  say(`  ${label.padEnd(62)} ${f1(r.rate).padStart(9)} ${f2(r.p50us / 1000).padStart(9)} ${f2(r.p99us / 1000).padStart(9)}${bad}`);
  if (cores) say(`  ${''.padEnd(64)}cpu cores: ${formatCores(cores)}`);
}

async function get<T>(url: string, key: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  const [pgVersion] = await adminQuery<{ server_version: string }>('show server_version');
  say('Chat benchmark');
  say(`  machine: ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}; Node ${process.version}; Postgres ${pgVersion?.server_version}`);
  say(`  database ${database}, logs ${path.join(outDir, 'logs')}; the fake Graph server and the load run in this process`);
  await createDatabase(database);
  run.databaseCreated = true;
  graph = await new FakeGraph().start();
  const adminToken = randomBytes(24).toString('hex');
  stack = await launchStack({
    databaseUrl: databaseUrl(database),
    natsUrl: NATS_URL,
    redisUrl: REDIS_URL,
    adminToken,
    identityTokenSecret: randomBytes(32).toString('hex'),
    servicePorts: 'free',
    gatewayPort: 0,
    natsStream,
    eventSubjectPrefix: subjectPrefix,
    redisKeyPrefix: redisPrefix,
    logLevel: 'warn',
    logDir: path.join(outDir, 'logs'),
    processEnv: { chat: { WHATSAPP_GRAPH_URL: graph.baseUrl, WHATSAPP_ACCESS_TOKEN: graph.token } },
    consoleSink: (l) => process.stderr.write(`${l}\n`),
    onUnexpectedExit: (name, info) => process.stderr.write(`${name} exited unexpectedly (${JSON.stringify(info)})\n`),
  });
  const gw = stack.gatewayUrl;
  const admin = new AdminClient(gw, adminToken);
  const s = await seed(gw, adminToken);
  const number = await admin.create<{ id: string }>(`/companies/${s.companyId}/whatsapp-numbers`, {
    display_number: '+55 11 4000-0000',
    raw_number: '551140000000',
    phone_number_id: graph.phoneNumberIds[0],
    business_account_id: graph.businessAccountId,
    provider: 'whatsapp_cloud',
  });

  // 10,000 chats of the company, written in one statement (the admin API would take minutes at the machine's pace):
  // activity spread over the last 10,000 minutes, a third unread, a tenth archived.
  const t0 = performance.now();
  await adminQuery(
    `insert into chat.chats (id, company_id, channel_type, chat_type, channel_account_id, wa_contact_id, contact_number, remote_profile_name,
       status, priority, unread_count, is_manually_unread, archived_at, last_customer_msg_at, last_activity_at, trailing_outbound_count,
       ai_message_count, created_at, updated_at)
     select gen_random_uuid(), ${lit(s.companyId)}, 'WHATSAPP', 'INDIVIDUAL', ${lit(number.id)}, (5511900000000 + g)::text, '+' || (5511900000000 + g)::text,
       'Contact ' || g, 'OPEN', g % 4, case when g % 3 = 0 then 2 else 0 end, false, case when g % 10 = 0 then now() end,
       now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval, 0, 0, now(), now()
     from generate_series(1, ${CHATS}) g`,
    database,
  );
  await adminQuery('analyze chat.chats', database);
  say(`  seeded ${CHATS} chats of one company in ${f1((performance.now() - t0) / 1000)} s (SQL, then analyze)`);

  const chatsUrl = `${gw}/integrations/external/chats`;
  const headers = { authorization: `Bearer ${s.key}` };
  const first = await get<{ total: number; records: { id: string }[]; next_cursor: string }>(`${chatsUrl}?take=${TAKE}`, s.key);
  let cursor = first.next_cursor;
  for (let page = 2; page < DEEP_PAGE; page++)
    cursor = (await get<{ next_cursor: string }>(`${chatsUrl}?take=${TAKE}&cursor=${cursor}`, s.key)).next_cursor;
  const deep = await get<{ records: { id: string }[] }>(`${chatsUrl}?take=${TAKE}&cursor=${cursor}`, s.key);
  say(`  GET /chats?take=${TAKE}: total ${first.total} (not archived); page ${DEEP_PAGE} by cursor holds ${deep.records.length} chats`);

  say();
  say(`GET /chats through the gateway (${CHATS} chats of one company), next to pgbench of chat's list statements`);
  header();
  const cursorOf = (c: string) => JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as { t: string; i: string };
  const pages = [
    ['first page', `${chatsUrl}?take=${TAKE}`, null],
    [`page ${DEEP_PAGE} (cursor)`, `${chatsUrl}?take=${TAKE}&cursor=${cursor}`, cursorOf(cursor)],
  ] as const;
  for (const [label, url, at] of pages) {
    for (const connections of [1, C]) {
      const r = await phase(() =>
        measure({ url, headers, connections, durationS: connections === 1 ? ONE_DURATION : DURATION, warmupS: WARMUP, expectStatus: 200 }),
      );
      line(`${label}, ${connections} connection${connections > 1 ? 's' : ''}`, r.value as LoadResult, r.cores);
    }
    // The ceiling: the page and count statements chat sends for this request, as one pgbench transaction.
    const plan = planList(s.companyId, {}, null);
    const values: Record<number, string> = { 1: lit(s.companyId) };
    let where = plan.where;
    if (at) where += ` and (c.last_activity_at, c.id) < (${lit(at.t)}::timestamptz, ${lit(at.i)}::uuid)`;
    const script = [
      bound(`${CHAT_SELECT} where ${where} order by c.last_activity_at desc, c.id desc limit ${TAKE + 1}`, values),
      bound(`select count(*)::int as total from chats c where ${plan.where}`, values),
    ].join('\n');
    for (const clients of [1, C]) {
      const pg = await pgbench({
        name: `list_${at ? 'deep' : 'first'}_${clients}`,
        database,
        host: '127.0.0.1',
        port: 5432,
        user: 'postgres',
        clients,
        threads: Math.min(clients, 2),
        durationS: clients === 1 ? ONE_DURATION : DURATION,
        warmupS: 1,
        script: `${script}\n`,
        workDir: path.join(outDir, 'pgbench'),
        searchPath: 'chat',
      });
      line(`  ceiling: pgbench page + count, ${clients} client${clients > 1 ? 's' : ''}`, pg);
    }
  }

  // Sending: one chat inside its window, text messages to the fake Graph server.
  const target = first.records[0]!.id;
  await adminQuery(`update chat.chats set last_customer_msg_at = now() where id = ${lit(target)}`, database);
  const sendUrl = `${chatsUrl}/${target}/messages`;
  const sendBody = JSON.stringify({ body: 'Olá! Your order has shipped.' });
  const graphUrl = `${graph.baseUrl}/${graph.phoneNumberIds[0]}/messages`;
  const graphBody = JSON.stringify({
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: '5511900000001',
    type: 'text',
    text: { body: 'Olá! Your order has shipped.' },
  });
  say();
  say('POST /chats/{id}/messages (text, synchronous to the provider) through the gateway, next to the bare provider round trip');
  header();
  for (const connections of [1, C]) {
    const durationS = connections === 1 ? ONE_DURATION : DURATION;
    const r = await phase(() =>
      measure({
        url: sendUrl,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: sendBody,
        connections,
        durationS,
        warmupS: WARMUP,
        expectStatus: 201,
      }),
    );
    line(`send, ${connections} connection${connections > 1 ? 's' : ''}`, r.value as LoadResult, r.cores);
    const bare = await phase(() =>
      measure({
        url: graphUrl,
        method: 'POST',
        headers: { authorization: `Bearer ${graph!.token}`, 'content-type': 'application/json' },
        body: graphBody,
        connections,
        durationS,
        warmupS: 1,
        expectStatus: 200,
      }),
    );
    line(`  ceiling: bare POST to the fake Graph server, ${connections} connection${connections > 1 ? 's' : ''}`, bare.value as LoadResult);
  }
  if (graph.violations.length) say(`\nFAKE GRAPH VIOLATIONS: ${graph.violations.slice(0, 3).join('; ')}`);
}

await runBench(main, async () => {
  const notes: string[] = [];
  await stack?.stop().catch((e: Error) => notes.push(`stack: ${e.message}`));
  await graph?.stop().catch((e: Error) => notes.push(`graph: ${e.message}`));
  notes.push(...(await releaseResources(run)));
  say();
  say(`cleanup: stopped the stack; ${notes.join('; ')}`);
});
