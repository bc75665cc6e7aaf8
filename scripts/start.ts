/**
 * `npm start`: the whole stack on this machine.
 *
 * - Postgres, NATS (JetStream) and Redis: DATABASE_URL, NATS_URL and REDIS_URL when set; else the
 *   standard local ports when they answer (Postgres 5432 as user postgres with trust auth, database
 *   svc_dev created when missing; NATS 4222; Redis 6379); else embedded ones started here.
 * - ADMIN_TOKEN and IDENTITY_TOKEN_SECRET from the environment, else kept in .data/dev-secrets.json.
 * - The five services and the gateway (PORT, default 8080) as child processes, logs in .data/logs/.
 * - A demo company with a key on first start; prints the URLs, tokens and curl commands.
 * - A service or the gateway that dies is restarted after a backoff (0.5 s, doubling to 8 s); one that dies more
 *   than 5 times within a minute stops everything (exit 1).
 * - Ctrl-C / SIGTERM stops everything started here and exits 0.
 *
 * Testing knobs: SVC_PROBE_PG_PORT, SVC_PROBE_NATS_PORT, SVC_PROBE_REDIS_PORT move the probed local
 * ports (point them at closed ports to exercise the embedded fallback); SVC_DATA_DIR moves .data.
 */
import path from 'node:path';
import { AdminClient, checkDemo, renewDemoKey, seedDemo } from './demo.js';
import { type DemoRecord, DevSecretsFile } from './dev-secrets.js';
import { type Infra, resolveInfra } from './infra.js';
import { type ConsoleSink, defaultConsoleSink } from './processes.js';
import { launchStack, REPO_ROOT, type Stack } from './stack.js';

const env = process.env;
const root = REPO_ROOT;
const dataDir = path.resolve(root, env.SVC_DATA_DIR ?? '.data');
const logDir = path.join(dataDir, 'logs');

const useColor = Boolean(process.stdout.isTTY) && !env.NO_COLOR;
const bold = (s: string) => (useColor ? `\u001b[1m${s}\u001b[0m` : s);
const dim = (s: string) => (useColor ? `\u001b[2m${s}\u001b[0m` : s);
const say = (text: string) => process.stdout.write(`${dim('[start]')} ${text}\n`);
const fail = (text: string) => process.stderr.write(`${useColor ? '\u001b[31m[start]\u001b[0m' : '[start]'} ${text}\n`);

// Once shutdown begins, the children's shutdown chatter stays in their log files.
let shuttingDown = false;
const sink: ConsoleSink = (line) => {
  if (!shuttingDown) defaultConsoleSink(line);
};

const abort = new AbortController();
let crashed: string | undefined;
let wake: (() => void) | undefined;
const stopRequested = new Promise<void>((resolve) => {
  wake = resolve;
});
const requestStop = (reason: string) => {
  if (abort.signal.aborted) return;
  shuttingDown = true;
  say(`${reason}: stopping everything started here ...`);
  abort.abort();
  wake?.();
};
let signals = 0;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    signals++;
    if (signals === 1) requestStop(sig);
    else if (signals === 3) say('still stopping; children get SIGKILL after their grace period');
  });
}
const onCrash = (name: string, detail: string) => {
  // A Ctrl-C in the terminal also reaches the embedded Postgres (the package starts it in our process
  // group), which may exit before our own SIGINT handler has run: give the signal a moment to arrive.
  setTimeout(() => {
    if (abort.signal.aborted) return;
    crashed = `${name} ${detail}`;
    fail(`${name} ${detail}`);
    requestStop(`${name} stopped unexpectedly`);
  }, 300);
};

const describeExit = (info: { code: number | null; signal: string | null }) =>
  info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function banner(stack: Stack, infra: Infra, adminToken: string, demo: { company_id: string; key: string }, notes: string[]): string {
  const g = stack.gatewayUrl;
  const auth = shellQuote(`Authorization: Bearer ${demo.key}`);
  const lines = [
    '',
    bold('The stack is up.'),
    '',
    `  Gateway URL       ${bold(g)}`,
    `  Admin token       ${bold(adminToken)}   (Authorization: Bearer ... on ${g}/admin/v1)`,
    `  Demo company id   ${bold(demo.company_id)}`,
    `  Demo key          ${bold(demo.key)}   (Authorization: Bearer ... on ${g}/integrations/external)`,
    '',
    `  Postgres  ${infra.postgres.note}`,
    `  NATS      ${infra.nats.note}`,
    `  Redis     ${infra.redis.note}`,
    `  Logs      ${path.relative(process.cwd(), stack.logDir) || '.'}/<name>.log (warnings and errors also show here)`,
    `  Secrets   ${path.relative(process.cwd(), path.join(dataDir, 'dev-secrets.json'))}`,
    ...notes.map((n) => `  Note      ${n}`),
    '',
    bold('  Create a lead:'),
    `    curl -sS -X POST ${g}/integrations/external/leads -H ${auth} -H 'Content-Type: application/json' -d '{"title":"My first lead"}'`,
    '',
    bold('  Read it back (by the id or the code from the answer), e.g. create and read in one go:'),
    `    LEAD_ID=$(curl -sS -X POST ${g}/integrations/external/leads -H ${auth} -H 'Content-Type: application/json' -d '{"title":"Another lead"}' | sed -E 's/.*"id":"([^"]+)".*/\\1/')`,
    `    curl -sS ${g}/integrations/external/leads/$LEAD_ID -H ${auth}`,
    '',
    `  Conformance smoke test:  GATEWAY_URL=${g} ADMIN_TOKEN=${adminToken} node --test ../shared/conformance/`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ];
  return lines.join('\n');
}

async function main(): Promise<number> {
  const secretsFile = new DevSecretsFile(path.join(dataDir, 'dev-secrets.json'));
  const secrets = secretsFile.load();
  const adminToken = env.ADMIN_TOKEN || secrets.admin_token;
  const identityTokenSecret = env.IDENTITY_TOKEN_SECRET || secrets.identity_token_secret;
  if (adminToken.length < 16) throw new Error('ADMIN_TOKEN must be at least 16 characters');
  if (identityTokenSecret.length < 32) throw new Error('IDENTITY_TOKEN_SECRET must be at least 32 characters');
  const gatewayPort = env.PORT ? Number(env.PORT) : 8080;
  if (!Number.isInteger(gatewayPort) || gatewayPort < 0 || gatewayPort > 65535)
    throw new Error(`PORT must be a port number, not ${env.PORT}`);

  let infra: Infra | undefined;
  let stack: Stack | undefined;
  try {
    say('looking for Postgres, NATS and Redis ...');
    infra = await resolveInfra({ root, dataDir, logDir, env, consoleSink: sink, say, signal: abort.signal, onUnexpectedExit: onCrash });
    if (abort.signal.aborted) return crashed ? 1 : 0;

    say(`starting the services and the gateway (logs in ${path.relative(process.cwd(), logDir)}/) ...`);
    stack = await launchStack({
      root,
      databaseUrl: infra.postgres.url,
      natsUrl: infra.nats.url,
      redisUrl: infra.redis.url,
      adminToken,
      identityTokenSecret,
      gatewayPort,
      host: env.HOST || undefined,
      natsStream: env.NATS_STREAM || undefined,
      eventSubjectPrefix: env.EVENT_SUBJECT_PREFIX || undefined,
      redisKeyPrefix: env.REDIS_KEY_PREFIX || undefined,
      logLevel: env.LOG_LEVEL || undefined,
      rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE ? Number(env.RATE_LIMIT_PER_MINUTE) : undefined,
      dbPoolMax: env.DB_POOL_MAX ? Number(env.DB_POOL_MAX) : undefined,
      // The local stack serves receivers on this machine (the conformance smoke test's is on loopback), so
      // deliveries may reach private addresses unless the environment says otherwise; the service's own
      // default, for deployments, stays off.
      webhookAllowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS || 'true',
      logDir,
      consoleSink: sink,
      signal: abort.signal,
      // A crashed service or gateway is started again with a backoff, as a process manager would; only one that
      // keeps crashing stops the stack.
      onRestart: (name, info, attempt, delayMs, logFile) =>
        fail(`${name} ${describeExit(info)}; restarting it in ${delayMs / 1000} s (restart ${attempt} within a minute); see ${logFile}`),
      onUnexpectedExit: (name, info, logFile) => onCrash(name, `${describeExit(info)} and keeps crashing; see ${logFile}`),
    });
    if (abort.signal.aborted) return crashed ? 1 : 0;

    // The demo company: created on the first start against this database, reused afterwards.
    const admin = new AdminClient(stack.gatewayUrl, adminToken);
    const database = infra.postgres.identity;
    const notes: string[] = [];
    const remember = (record: DemoRecord) => {
      secrets.demo = record;
      secrets.demos = { ...secrets.demos, [database]: record };
      secretsFile.save(secrets);
    };
    let demo = secrets.demos?.[database] ?? (secrets.demo?.database === database ? secrets.demo : undefined);
    const state = demo ? await checkDemo(admin, demo) : 'missing';
    if (!demo || state === 'missing') {
      say(
        demo ? `the recorded demo company is not in ${database}: creating a new one ...` : `creating the demo company in ${database} ...`,
      );
      demo = await seedDemo(admin, database, say);
      remember(demo);
      notes.push(
        'demo company created on this start (master user, integration user, key, pipelines, tags, sources, reasons, task types and stages, a sandbox WhatsApp number with an agent and a template)',
      );
    } else if (state === 'key-invalid') {
      demo = await renewDemoKey(admin, demo);
      remember(demo);
      notes.push('the recorded demo key no longer worked: a new one was created');
    } else if (secrets.demo !== demo) {
      remember(demo);
    }
    if (env.ADMIN_TOKEN) notes.push('ADMIN_TOKEN from the environment');
    notes.push(
      env.WEBHOOK_ALLOW_PRIVATE_NETWORKS
        ? `WEBHOOK_ALLOW_PRIVATE_NETWORKS=${env.WEBHOOK_ALLOW_PRIVATE_NETWORKS} from the environment (webhooks to private addresses)`
        : 'webhooks may reach loopback and private addresses (local stack; WEBHOOK_ALLOW_PRIVATE_NETWORKS=false to refuse)',
    );
    if (abort.signal.aborted) return crashed ? 1 : 0;

    process.stdout.write(`${banner(stack, infra, adminToken, demo, notes)}\n`);
    await stopRequested;
    return crashed ? 1 : 0;
  } catch (err) {
    if (abort.signal.aborted && !crashed) return 0;
    fail((err as Error).message ?? String(err));
    return 1;
  } finally {
    shuttingDown = true;
    if (stack) await stack.stop().catch((err: Error) => fail(`stopping the stack: ${err.message}`));
    if (infra) await infra.stop().catch((err: Error) => fail(`stopping Postgres/NATS/Redis: ${err.message}`));
    if (stack || infra) say('stopped.');
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    fail(err.stack ?? String(err));
    process.exit(1);
  },
);
