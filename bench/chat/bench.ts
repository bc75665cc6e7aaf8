/**
 * Chat (`npm run bench:chat`, and a part of `npm run bench:all`): GET /chats over many chats of one company (the
 * first page and a page deep behind a cursor) and POST /chats/{id}/messages against the fake Graph server, through
 * the gateway against the whole system run as processes. Each is printed next to a ceiling measured in the same run:
 * pgbench of the very list statements chat sends (its CHAT_SELECT and planList), and the bare round trip to the fake
 * provider. Prints, never asserts; returns the figures of issue 20. See bench/chat/README.md.
 */
import path from 'node:path';
import { listStatement, planList } from '@svc/chat';
import { FakeGraph } from '@svc/chat/testing';
import { AdminClient } from '../../scripts/demo.js';
import { phaseProfiles } from '../lib/cpuprofile.js';
import { BenchRun, f1, f2, f3, ratio, say, verdict } from '../lib/harness.js';
import { adminQuery, databaseUrl } from '../lib/infra.js';
import { type LoadResult, measure } from '../lib/load.js';
import { bound, lit, pgbench } from '../lib/pgbench.js';
import { startBareList, startProxy } from '../lib/raw.js';
import { seed } from '../lib/seed.js';
import type { Figures } from '../lib/stats.js';
import { type BenchFigures, meets, targetText } from '../lib/targets.js';

export interface ChatSettings {
  connections: number;
  durationS: number;
  warmupS: number;
  oneDurationS: number;
  chats: number;
  /** The cursor page measured, 50 chats a page. */
  deepPage: number;
  /** CPU profiles of chat and the gateway (node --cpu-prof), summarised per phase after the stack stops (slower). */
  profile?: boolean;
}

export type ChatFigures = BenchFigures<'chat_list_p99_vs_pgbench' | 'chat_list_rps_vs_pgbench' | 'chat_send_cpu_ms'>;

const TAKE = 50;

async function get<T>(url: string, key: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

const header = () => say(`  ${''.padEnd(62)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
function line(label: string, r: Figures & { unexpected?: number; statuses?: Record<string, number> }, mark = '') {
  const bad = r.unexpected ? `   UNEXPECTED: ${r.unexpected} (statuses ${JSON.stringify(r.statuses)})` : '';
  say(`  ${label.padEnd(62)} ${f1(r.rate).padStart(9)} ${f2(r.p50us / 1000).padStart(9)} ${f2(r.p99us / 1000).padStart(9)}${bad}${mark}`);
}

/** Runs the bench on its own stack and database, removed afterwards. */
export async function benchChat(settings: ChatSettings): Promise<ChatFigures> {
  const { connections: C, durationS: DURATION, warmupS: WARMUP, oneDurationS: ONE_DURATION, chats: CHATS, deepPage: DEEP_PAGE } = settings;
  const bench = new BenchRun('bench-chat');
  const { database } = bench;
  const profDir = path.join(bench.outDir, 'prof');
  let graph: FakeGraph | undefined;
  /** A phase of the bench, its CPU line printed under its figures (with the DISTURBED mark). */
  const phase = async <T extends Figures>(name: string, work: () => Promise<T>) => {
    const r = await bench.phase(name, work);
    return {
      ...r,
      mark: bench.disturbed.includes(name) ? `   DISTURBED: other processes used ${f2(r.cores['other processes'] ?? 0)} cores` : '',
    };
  };

  const main = async (): Promise<ChatFigures> => {
    await bench.preamble(
      'svc bench: chat',
      `${CHATS} chats; ${C} connections for ${DURATION} s, one for ${ONE_DURATION} s, after ${WARMUP} s; page ${DEEP_PAGE} by cursor`,
    );
    graph = await new FakeGraph().start();
    say('  the fake Graph server and the load run in this process ("bench (autocannon)")');
    const profiling = (proc: string): Record<string, string> =>
      settings.profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.join(profDir, proc)}` } : {};
    const stack = await bench.launch({
      chat: { WHATSAPP_GRAPH_URL: graph.baseUrl, WHATSAPP_ACCESS_TOKEN: graph.token, ...profiling('chat') },
      gateway: profiling('gateway'),
    });
    const gw = stack.gatewayUrl;
    const admin = new AdminClient(gw, bench.adminToken);
    const s = await seed(gw, bench.adminToken);
    const number = await admin.create<{ id: string }>(`/companies/${s.companyId}/whatsapp-numbers`, {
      display_number: '+55 11 4000-0000',
      raw_number: '551140000000',
      phone_number_id: graph.phoneNumberIds[0],
      business_account_id: graph.businessAccountId,
      provider: 'whatsapp_cloud',
    });

    // The chats of the company, written in one statement (the admin API would take minutes at the machine's pace):
    // activity spread over the last CHATS minutes, a third unread, a tenth archived.
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
      [`page ${DEEP_PAGE}`, `${chatsUrl}?take=${TAKE}&cursor=${cursor}`, cursorOf(cursor)],
    ] as const;
    /** Each list phase against its ceiling at the same number of clients: p99 over pgbench's, req/s over pgbench's. */
    const versus: { phases: string[]; p99: number; rps: number }[] = [];
    /** The same phases through the least a Node service and forward can do (decision 0265). */
    const floor: { phases: string[]; p99: number; rps: number }[] = [];
    /** And through the contract's data work with no framework (chat's typed rows and views, decision 0273). */
    const contractFloor: { phases: string[]; p99: number; rps: number }[] = [];
    for (const [label, url, at] of pages) {
      // The ceiling: the statement chat sends for this request (its page with the count of the whole query).
      const st = listStatement(planList(s.companyId, {}, null), { take: TAKE, after: at ?? undefined, skip: 0 });
      const script = bound(st.text, Object.fromEntries(st.values.map((v, i) => [i + 1, lit(String(v))])));
      const bare = await startBareList(databaseUrl(database), st.text, st.values);
      const bareForward = await startProxy('node-http', bare.url);
      bench.track('bare list', bare.pid);
      bench.track('bare forward', bareForward.pid);
      const contract = await startBareList(databaseUrl(database), st.text, st.values, TAKE);
      const contractForward = await startProxy('node-http', contract.url);
      bench.track('contract list', contract.pid);
      bench.track('contract forward', contractForward.pid);
      // The contract floor must answer what chat answers, byte for byte, or it measures other work.
      const [fromChat, fromFloor] = await Promise.all(
        [url, `${contractForward.url}/chats`].map(async (u) => (await fetch(u, { headers })).text()),
      );
      if (fromChat !== fromFloor) throw new Error(`the contract floor's ${label} differs from chat's: ${fromFloor?.slice(0, 300)}`);
      for (const connections of [1, C]) {
        const durationS = connections === 1 ? ONE_DURATION : DURATION;
        const name = `GET ${label} ${connections}c`;
        const r = await phase(name, () => measure({ url, headers, connections, durationS, warmupS: WARMUP, expectStatus: 200 }));
        line(`${label}${at ? ' (cursor)' : ''}, ${connections} connection${connections > 1 ? 's' : ''}`, r.value as LoadResult, r.mark);
        // CPU per page moves less with the machine's other load than req/s does: the figure to compare changes by.
        const perPage = (p: string) => f2(((r.cores[p] ?? Number.NaN) / r.value.rate) * 1000);
        say(`  ${''.padEnd(62)} CPU per page: chat ${perPage('chat')} ms, gateway ${perPage('gateway')} ms`);
        const pgName = `pgbench ${label} ${connections}c`;
        const spec = bench.pgbenchSpec(`list_${at ? 'deep' : 'first'}_${connections}`, `${script}\n`, connections, durationS, 1, 2);
        const pg = await phase(pgName, () => pgbench({ ...spec, searchPath: 'chat' }, bench.onPgbench));
        line(`  ceiling: pgbench of chat's statement, ${connections} client${connections > 1 ? 's' : ''}`, pg.value, pg.mark);
        versus.push({ phases: [name, pgName], p99: ratio(r.value.p99us, pg.value.p99us), rps: ratio(r.value.rate, pg.value.rate) });
        const floorName = `floor ${label} ${connections}c`;
        const f = await phase(floorName, () =>
          measure({ url: `${bareForward.url}/chats`, connections, durationS, warmupS: WARMUP, expectStatus: 200 }),
        );
        line(`  floor: bare service + bare forward, ${connections} connection${connections > 1 ? 's' : ''}`, f.value as LoadResult, f.mark);
        const perFloor = (p: string) => f2(((f.cores[p] ?? Number.NaN) / f.value.rate) * 1000);
        say(`  ${''.padEnd(62)} CPU per page: bare list ${perFloor('bare list')} ms, bare forward ${perFloor('bare forward')} ms`);
        floor.push({ phases: [floorName, pgName], p99: ratio(f.value.p99us, pg.value.p99us), rps: ratio(f.value.rate, pg.value.rate) });
        const contractName = `contract floor ${label} ${connections}c`;
        const k = await phase(contractName, () =>
          measure({ url: `${contractForward.url}/chats`, connections, durationS, warmupS: WARMUP, expectStatus: 200 }),
        );
        line(
          `  contract floor: chat's views, bare forward, ${connections} connection${connections > 1 ? 's' : ''}`,
          k.value as LoadResult,
          k.mark,
        );
        const perContract = (p: string) => f2(((k.cores[p] ?? Number.NaN) / k.value.rate) * 1000);
        say(
          `  ${''.padEnd(62)} CPU per page: contract list ${perContract('contract list')} ms, bare forward ${perContract('contract forward')} ms`,
        );
        contractFloor.push({
          phases: [contractName, pgName],
          p99: ratio(k.value.p99us, pg.value.p99us),
          rps: ratio(k.value.rate, pg.value.rate),
        });
      }
      for (const name of ['bare list', 'bare forward', 'contract list', 'contract forward']) bench.untrack(name);
      await Promise.all([bareForward.stop(), contractForward.stop()]);
      await Promise.all([bare.stop(), contract.stop()]);
    }
    const worstP99 = versus.reduce((w, v) => (v.p99 > w.p99 || Number.isNaN(v.p99) ? v : w));
    const worstRps = versus.reduce((w, v) => (v.rps < w.rps || Number.isNaN(v.rps) ? v : w));
    say(
      `  worst phase: p99 / pgbench ${f3(worstP99.p99)} (${worstP99.phases[0]}; target ${targetText('chat_list_p99_vs_pgbench')}: ` +
        `${verdict(meets('chat_list_p99_vs_pgbench', worstP99.p99))}); req/s / pgbench ${f3(worstRps.rps)} (${worstRps.phases[0]}; ` +
        `target ${targetText('chat_list_rps_vs_pgbench')}: ${verdict(meets('chat_list_rps_vs_pgbench', worstRps.rps))})`,
    );

    const floorP99 = floor.reduce((w, v) => (v.p99 > w.p99 || Number.isNaN(v.p99) ? v : w));
    const floorRps = floor.reduce((w, v) => (v.rps < w.rps || Number.isNaN(v.rps) ? v : w));
    say(
      `  floor, worst phase: p99 / pgbench ${f3(floorP99.p99)} (${floorP99.phases[0]}); req/s / pgbench ${f3(floorRps.rps)} (${floorRps.phases[0]})`,
    );
    const contractP99 = contractFloor.reduce((w, v) => (v.p99 > w.p99 || Number.isNaN(v.p99) ? v : w));
    const contractRps = contractFloor.reduce((w, v) => (v.rps < w.rps || Number.isNaN(v.rps) ? v : w));
    say(
      `  contract floor, worst phase: p99 / pgbench ${f3(contractP99.p99)} (${contractP99.phases[0]}); ` +
        `req/s / pgbench ${f3(contractRps.rps)} (${contractRps.phases[0]})`,
    );

    // Sending: one chat inside its window, text messages to the fake Graph server.
    const target = first.records[0]!.id;
    await adminQuery(`update chat.chats set last_customer_msg_at = now() where id = ${lit(target)}`, database);
    const sendBody = JSON.stringify({ body: 'Olá! Your order has shipped.' });
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
    let sendCpuMs = Number.NaN;
    for (const connections of [1, C]) {
      const durationS = connections === 1 ? ONE_DURATION : DURATION;
      const name = `send ${connections}c`;
      const r = await phase(name, () =>
        measure({
          url: `${chatsUrl}/${target}/messages`,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: sendBody,
          connections,
          durationS,
          warmupS: WARMUP,
          expectStatus: 201,
        }),
      );
      // chat's CPU per send: its cores busy over the phase / sends per second.
      const cpuMs = ((r.cores.chat ?? Number.NaN) / r.value.rate) * 1000;
      line(`send, ${connections} connection${connections > 1 ? 's' : ''}`, r.value, r.mark);
      say(`  ${''.padEnd(62)} chat ${f2(cpuMs)} ms CPU per send (chat at ${f2(r.cores.chat ?? Number.NaN)} cores)`);
      if (connections === C) sendCpuMs = cpuMs;
      const bare = await phase(`bare graph ${connections}c`, () =>
        measure({
          url: `${graph!.baseUrl}/${graph!.phoneNumberIds[0]}/messages`,
          method: 'POST',
          headers: { authorization: `Bearer ${graph!.token}`, 'content-type': 'application/json' },
          body: graphBody,
          connections,
          durationS,
          warmupS: 1,
          expectStatus: 200,
        }),
      );
      line(`  ceiling: bare POST to the fake Graph server, ${connections} connection${connections > 1 ? 's' : ''}`, bare.value, bare.mark);
    }
    say(
      `  chat CPU per send at ${C} connections: ${f2(sendCpuMs)} ms (target ${targetText('chat_send_cpu_ms')}: ${verdict(meets('chat_send_cpu_ms', sendCpuMs))})`,
    );
    if (graph.violations.length) say(`\nFAKE GRAPH VIOLATIONS: ${graph.violations.slice(0, 3).join('; ')}`);
    bench.summarizeDisturbance();
    if (settings.profile) {
      // The processes write their profiles when they exit: stop the stack first.
      await bench.stopStack();
      say();
      say('## CPU profiles of chat and the gateway (node --cpu-prof), per phase');
      const measured = (name: string) => /^(GET|send)/.test(name);
      for (const l of phaseProfiles(profDir, bench.phases, { chat: measured, gateway: measured })) say(l);
    }
    return {
      figures: {
        chat_list_p99_vs_pgbench: { value: worstP99.p99, phases: worstP99.phases },
        chat_list_rps_vs_pgbench: { value: worstRps.rps, phases: worstRps.phases },
        chat_send_cpu_ms: { value: sendCpuMs, phases: [`send ${C}c`] },
      },
      disturbed: [...bench.disturbed],
    };
  };

  return bench.run(main, async () => {
    const notes: string[] = [];
    await graph?.stop().then(
      () => notes.push('stopped the fake Graph server'),
      (e: Error) => notes.push(`graph: ${e.message}`),
    );
    return notes;
  });
}
