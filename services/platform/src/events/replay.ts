import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { MikroORM } from '@mikro-orm/postgresql';
import { type JetStreamClient, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ConfigError, loadConfig, serviceConfigSchema } from '../config.js';
import { createOrm, type DbDefinition } from '../db/orm.js';
import { ensureEventStream } from './nats.js';
import { companyRowsBetween } from './outbox.store.js';
import { outboxMessageData, uuidV7Floor } from './relay.js';

/**
 * Postgres is the source of truth for events (a NATS publish is acked before it reaches disk). Replayed messages keep
 * the event id in the body with a Nats-Msg-Id of their own, so the duplicate window keeps them; consumers dedupe by
 * event id.
 */
export interface ReplayOptions {
  orm: MikroORM;
  js: JetStreamClient;
  schema: string;
  subjectPrefix: string;
  companyId: string;
  /** Inclusive. */
  since: Date;
  /** Exclusive; default now. */
  until?: Date;
  /** Keeps this run's message ids apart from the relay's and other runs'. */
  runId?: string;
  batchSize?: number;
}

export interface ReplayResult {
  runId: string;
  replayed: number;
  /** Not yet published by the relay (it still will; consumers drop the second copy). */
  unpublished: number;
}

export const replayMsgId = (eventId: string, runId: string) => `${eventId}:replay:${runId}`;

export const newReplayRunId = () => `${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;

// Ids are taken a moment before occurred_at: the id range is widened by this much and occurred_at decides.
const ID_SLACK_MS = 60_000;

export async function replayEvents(o: ReplayOptions): Promise<ReplayResult> {
  const runId = o.runId ?? newReplayRunId();
  const until = o.until ?? new Date();
  const batchSize = o.batchSize ?? 500;
  const upperId = uuidV7Floor(new Date(until.getTime() + ID_SLACK_MS));
  let after = uuidV7Floor(new Date(o.since.getTime() - ID_SLACK_MS));
  let replayed = 0;
  let unpublished = 0;
  for (;;) {
    const rows = await companyRowsBetween(o.orm, o.schema, {
      companyId: o.companyId,
      afterId: after,
      beforeId: upperId,
      since: o.since,
      until,
      limit: batchSize,
    });
    if (!rows.length) break;
    const results = await Promise.allSettled(
      rows.map((row) =>
        o.js.publish(`${o.subjectPrefix}.${row.event_key}`, outboxMessageData(row), {
          msgID: replayMsgId(row.id, runId),
          timeout: 5000,
        }),
      ),
    );
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    replayed += results.length - failed.length;
    if (failed.length) {
      throw new ReplayError(
        `${failed.length} of ${rows.length} publishes failed (${(failed[0]!.reason as Error).message}); ` +
          `${replayed} events were replayed before that. Replaying the same range again is safe.`,
        { runId, replayed, unpublished },
      );
    }
    unpublished += rows.filter((r) => r.published_at === null).length;
    after = rows[rows.length - 1]!.id;
    if (rows.length < batchSize) break;
  }
  return { runId, replayed, unpublished };
}

export class ReplayError extends Error {
  override name = 'ReplayError';
  constructor(
    message: string,
    readonly partial: ReplayResult,
  ) {
    super(message);
  }
}

const USAGE = `usage: npm run events:replay -- --service <name> --company <uuid> --since <ISO time> [--until <ISO time>]

Publishes the company's events of [since, until) (until defaults to now) from the service's outbox to
JetStream again, with their original event ids. Consumers drop events they have already handled.
Reads DATABASE_URL, NATS_URL, NATS_STREAM, EVENT_SUBJECT_PREFIX and OUTBOX_RETENTION_HOURS.`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

export interface ReplayArguments {
  companyId: string;
  since: Date;
  until: Date;
}

/** Throws an Error whose message names the problem. */
export function parseReplayArguments(service: string, argv: string[], now = new Date()): ReplayArguments {
  const { values } = parseArgs({
    args: argv,
    options: {
      service: { type: 'string' },
      company: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.service !== undefined && values.service !== service) {
    throw new Error(`--service ${values.service}: this is the ${service} service's replay`);
  }
  if (!values.company || !UUID.test(values.company)) throw new Error('--company: must be the company id (a UUID)');
  const time = (name: string, value: string | undefined) => {
    const at = value && ISO_TIME.test(value) ? new Date(value) : undefined;
    if (!at || Number.isNaN(at.getTime())) throw new Error(`--${name}: must be an ISO 8601 time, such as 2026-11-20T09:30:00Z`);
    return at;
  };
  const since = time('since', values.since);
  const until = values.until === undefined ? now : time('until', values.until);
  if (until.getTime() <= since.getTime()) throw new Error('--until: must be later than --since');
  return { companyId: values.company.toLowerCase(), since, until };
}

/** `npm run events:replay`: prints one JSON line; exit code 2 for a bad command line, 1 when the replay failed. */
export async function replayMain(
  def: { name: string; db: Pick<DbDefinition, 'schema' | 'entities'> },
  argv: string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return;
  }
  let args: ReplayArguments;
  let config: ReturnType<typeof loadReplayConfig>;
  try {
    args = parseReplayArguments(def.name, argv);
    config = loadReplayConfig(env);
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : `${(err as Error).message}\n\n${USAGE}`;
    console.error(`${def.name} replay: ${message}`);
    process.exitCode = 2;
    return;
  }
  const retentionCutoff = new Date(Date.now() - config.OUTBOX_RETENTION_HOURS * 3_600_000);
  if (args.since < retentionCutoff) {
    console.error(
      `${def.name} replay: published events older than ${retentionCutoff.toISOString()} ` +
        `(OUTBOX_RETENTION_HOURS=${config.OUTBOX_RETENTION_HOURS}) may already be deleted; those are not replayed`,
    );
  }
  const schema = def.db.schema;
  const orm = await createOrm({ url: config.DATABASE_URL, schema, entities: def.db.entities, migrations: [], poolMax: 2 });
  let nc: Awaited<ReturnType<typeof connect>> | undefined;
  try {
    nc = await connect({ servers: config.NATS_URL.split(','), name: `${def.name}-replay`, timeout: 10_000 });
    await ensureEventStream(await jetstreamManager(nc), config.NATS_STREAM, config.EVENT_SUBJECT_PREFIX);
    const result = await replayEvents({
      orm,
      js: jetstream(nc),
      schema,
      subjectPrefix: config.EVENT_SUBJECT_PREFIX,
      companyId: args.companyId,
      since: args.since,
      until: args.until,
    });
    console.log(
      JSON.stringify({
        service: def.name,
        company_id: args.companyId,
        since: args.since.toISOString(),
        until: args.until.toISOString(),
        run_id: result.runId,
        replayed: result.replayed,
        unpublished: result.unpublished,
        msg: `replayed ${result.replayed} events`,
      }),
    );
  } catch (err) {
    console.error(`${def.name} replay failed: ${(err as Error).message}`);
    process.exitCode = 1;
  } finally {
    await nc?.close().catch(() => undefined);
    await orm.close(true);
  }
}

function loadReplayConfig(env: NodeJS.ProcessEnv) {
  return loadConfig(
    serviceConfigSchema.pick({
      DATABASE_URL: true,
      NATS_URL: true,
      NATS_STREAM: true,
      EVENT_SUBJECT_PREFIX: true,
      OUTBOX_RETENTION_HOURS: true,
    }),
    env,
  );
}
