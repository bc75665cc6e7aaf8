/**
 * The statements crm sends to Postgres for one operation, taken from crm itself: its own service class runs the
 * operation in this process against the bench database, and every `pg` query issued in that call's async context
 * is recorded (statement name, text, parameters) — the named statements and the ORM's alike, in their order,
 * with `begin`/`commit`. `pgbenchScript` turns such a sequence into a pgbench script that replays it, so a
 * ceiling cannot drift from what crm does.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';

export interface CapturedStatement {
  /** The prepared statement's name (crm's named statements), else undefined. */
  name: string | undefined;
  text: string;
  values: unknown[];
}

const sink = new AsyncLocalStorage<CapturedStatement[]>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const recorded = sink.getStore();
    if (recorded) {
      const [first, second] = args;
      const config = (typeof first === 'string' ? { text: first } : first) as { text: string; name?: string; values?: unknown[] };
      const values = Array.isArray(second) ? second : (config.values ?? []);
      recorded.push({ name: config.name, text: config.text, values });
    }
    return original.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

/** Runs `work` and returns the statements it sent through `pg` (any pool or client of this process). */
export async function capture(work: () => Promise<unknown>): Promise<CapturedStatement[]> {
  install();
  const recorded: CapturedStatement[] = [];
  await sink.run(recorded, work);
  return recorded;
}

const UUID_V7 = /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/g;

/** The UUIDv7s made at or after `sinceMs` (their first 48 bits are their creation time in ms). */
function freshIds(text: string, sinceMs: number): string[] {
  return [...text.matchAll(UUID_V7)].map((m) => m[0]).filter((u) => Number.parseInt(u.replace('-', '').slice(0, 12), 16) >= sinceMs);
}

/**
 * A string as an SQL literal pgbench leaves alone: pgbench reads `:name` as a variable even inside literals, so a
 * string with a colon is an E'' literal with its colons as `\x3a` (the same value).
 */
export function sqlLiteral(s: string): string {
  const quoted = s.replace(/'/g, "''");
  return s.includes(':') ? `E'${quoted.replace(/\\/g, '\\\\').replace(/:/g, '\\x3a')}'` : `'${quoted}'`;
}

/** The quoted literals of a statement's text (the ORM inlines its values) with their colons hidden from pgbench. */
function literalsWithoutColons(text: string): string {
  return text.replace(/(E?)'((?:[^']|'')*)'/g, (all, e: string, body: string) => {
    if (!body.includes(':')) return all;
    return e ? `E'${body.replace(/:/g, '\\x3a')}'` : sqlLiteral(body.replace(/''/g, "'"));
  });
}

/** A parameter as `pg` sends it (text), as a literal: arrays in Postgres' array syntax, objects as JSON. */
function parameterText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) {
    const item = (x: unknown) => (x === null || x === undefined ? 'NULL' : `"${String(x).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
    return `{${v.map(item).join(',')}}`;
  }
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A UUIDv7 made by Postgres now: crm's ids are v7 (time-ordered), so inserts hit the same end of each index. */
const V7_SQL = `overlay(overlay(overlay(gen_random_uuid()::text placing substr(t, 1, 8) from 1 for 8)
  placing substr(t, 9, 4) from 10 for 4) placing '7' from 15 for 1)::uuid`;

export interface ReplayScript {
  script: string;
  /** How many values are new in every transaction (ids made during the captured call, and values holding them). */
  freshIds: number;
  /** One line per statement: its name, or the start of its text. */
  outline: string[];
  /** The script's line of each statement (same order as `outline`). */
  lines: string[];
}

/**
 * A pgbench script replaying `statements` (to run with `-M prepared`). Every UUIDv7 made during the captured call
 * (at or after `sinceMs`: the new rows' ids, the event id, and any value the caller made unique with one) is a
 * new one in every transaction, the same one wherever the call used it: the script's first command makes them
 * (`\gset`), and each statement takes them where the call had them, whole parameters as parameters, inside
 * JSON or text through `replace()`. Every other parameter is the literal the call sent.
 */
export function pgbenchScript(statements: CapturedStatement[], sinceMs: number): ReplayScript {
  const fresh = new Map<string, string>();
  const note = (text: string) => {
    for (const id of freshIds(text, sinceMs)) if (!fresh.has(id)) fresh.set(id, `fresh_${fresh.size}`);
  };
  const texts = statements.map((st) => ({ st, params: st.values.map(parameterText) }));
  for (const { st, params } of texts) {
    note(st.text);
    for (const p of params) if (p !== null) note(p);
  }
  const expression = (p: string | null): string => {
    if (p === null) return 'null';
    const whole = fresh.get(p);
    if (whole) return `:${whole}`;
    let sql = sqlLiteral(p);
    for (const id of freshIds(p, sinceMs)) sql = `replace(${sql}, '${id}', :${fresh.get(id)})`;
    return sql;
  };
  const lines = texts.map(({ st, params }) => {
    let text = literalsWithoutColons(st.text);
    // The ORM inlines values: a new id in its text is a quoted literal.
    for (const [id, variable] of fresh) text = text.replaceAll(`'${id}'`, `:${variable}`);
    const sql = text.replace(/\$(\d+)/g, (_, n: string) => {
      const i = Number(n) - 1;
      if (i >= params.length) throw new Error(`no value for $${n} in ${st.name ?? st.text.slice(0, 60)}`);
      return expression(params[i]!);
    });
    return `${sql.replace(/\s+/g, ' ').trim()};`;
  });
  const make = [...fresh.values()].map((v) => `${V7_SQL.replace(/\s+/g, ' ')} as ${v}`);
  const header = make.length
    ? [
        `select ${make.join(', ')} from (select lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0') as t) x \\gset`,
      ]
    : [];
  return {
    script: [...header, ...lines, ''].join('\n'),
    freshIds: fresh.size,
    outline: statements.map((st) => st.name ?? st.text.replace(/\s+/g, ' ').trim().slice(0, 90)),
    lines,
  };
}
