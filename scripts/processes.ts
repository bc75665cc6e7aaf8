/**
 * Child processes of the local stack: each one's output goes, line by line, to its own log file, and
 * only its warnings and errors reach the console, prefixed by its name. Stopping is by PID: SIGTERM,
 * a grace period, then SIGKILL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

export type Severity = 'debug' | 'info' | 'warn' | 'error';

/** Classifies one output line: its severity and the text the console shows for it. */
export type LineClassifier = (line: string, stream: 'stdout' | 'stderr') => { severity: Severity; text: string };

export type ConsoleSink = (line: string) => void;

const useColor = Boolean(process.stderr.isTTY) && !process.env.NO_COLOR;
const paint = (code: number, s: string) => (useColor ? `\u001b[${code}m${s}\u001b[0m` : s);

export function consoleLine(name: string, severity: Severity, text: string): string {
  const label = severity === 'error' ? paint(31, 'ERROR') : severity === 'warn' ? paint(33, 'WARN ') : severity.toUpperCase().padEnd(5);
  return `${paint(36, `[${name}]`)} ${label} ${text}`;
}

export const defaultConsoleSink: ConsoleSink = (line) => process.stderr.write(`${line}\n`);

const PINO_LEVELS: Record<number, Severity> = { 10: 'debug', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'error' };
const SHOWN_FIELDS = ['err', 'error', 'signal', 'nats', 'service', 'upstream', 'path', 'status', 'event_id'];

/** pino JSON lines (the services and the gateway). Anything else on stderr counts as an error. */
export const pinoClassifier: LineClassifier = (line, stream) => {
  if (line.startsWith('{')) {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      const level = typeof entry.level === 'number' ? entry.level : 30;
      const severity = PINO_LEVELS[level] ?? (level >= 50 ? 'error' : 'info');
      const details = SHOWN_FIELDS.filter((k) => k !== 'service' && entry[k] !== undefined)
        .map((k) => `${k}=${describe(entry[k])}`)
        .join(' ');
      return { severity, text: `${String(entry.msg ?? '')}${details ? ` (${details})` : ''}` };
    } catch {
      // not JSON after all
    }
  }
  return { severity: stream === 'stderr' ? 'error' : 'info', text: line };
};

function describe(value: unknown): string {
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.message === 'string') return JSON.stringify(o.message);
    return JSON.stringify(value).slice(0, 300);
  }
  return JSON.stringify(value);
}

/** nats-server: `[pid] date time [WRN] text`. */
export const natsClassifier: LineClassifier = (line) => {
  const m = /\[(DBG|TRC|INF|WRN|ERR|FTL)\]\s*(.*)$/.exec(line);
  if (!m) return { severity: 'info', text: line };
  const tag = m[1];
  return { severity: tag === 'WRN' ? 'warn' : tag === 'ERR' || tag === 'FTL' ? 'error' : 'info', text: m[2] ?? line };
};

/** redis-server: `pid:role date time <mark> text`, where `#` marks a warning. */
export const redisClassifier: LineClassifier = (line) => {
  const m = /^\d+:[A-Z] .*? ([.\-*#]) (.*)$/.exec(line);
  if (!m) return { severity: 'info', text: line };
  const text = m[2] ?? line;
  // Redis writes its start and stop notices at warning level, and the kernel overcommit advice shows on
  // every start of a local Redis; none needs action for development.
  const routine =
    /Redis is starting|Redis version=|Configuration loaded|Server initialized|overcommit|shutdown|ready to exit|Received SIG/i;
  if (m[1] === '#' && !routine.test(text)) return { severity: 'warn', text };
  return { severity: 'info', text };
};

/** Postgres server messages: `... LOG:  text`, `WARNING:`, `ERROR:`, `FATAL:`, `PANIC:`. */
export const postgresClassifier: LineClassifier = (line) => {
  if (/\b(ERROR|FATAL|PANIC):/.test(line)) return { severity: 'error', text: line };
  if (/\bWARNING:/.test(line)) return { severity: 'warn', text: line };
  return { severity: 'info', text: line };
};

/** A log file that also forwards warnings and errors to the console, with the last lines kept for error messages. */
export class ProcessLog {
  readonly file: string;
  private readonly stream: WriteStream;
  private readonly recent: string[] = [];
  /** While stopping, only errors reach the console (shutdown chatter is expected). */
  quiet = false;

  constructor(
    readonly name: string,
    logDir: string,
    private readonly classify: LineClassifier,
    private readonly sink: ConsoleSink = defaultConsoleSink,
  ) {
    mkdirSync(logDir, { recursive: true });
    this.file = path.join(logDir, `${name}.log`);
    this.stream = createWriteStream(this.file, { flags: 'a' });
  }

  line(raw: string, stream: 'stdout' | 'stderr' = 'stdout'): void {
    const line = raw.replace(/\s+$/, '');
    if (!line) return;
    this.stream.write(`${line}\n`);
    this.recent.push(line);
    if (this.recent.length > 30) this.recent.shift();
    const { severity, text } = this.classify(line, stream);
    if (severity === 'error' || (severity === 'warn' && !this.quiet)) this.sink(consoleLine(this.name, severity, text));
  }

  /** The last lines written, for an error message when the process fails. */
  tail(n = 12): string {
    return this.recent.slice(-n).join('\n');
  }

  note(text: string): void {
    this.stream.write(`${JSON.stringify({ time: new Date().toISOString(), supervisor: text })}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcessOptions {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logDir: string;
  classify: LineClassifier;
  sink?: ConsoleSink;
  /** Called once when the process exits without having been asked to stop. */
  onUnexpectedExit?: (proc: ManagedProcess, info: ExitInfo) => void;
}

/** Every process spawned here and still running: killed (SIGKILL) if this process exits abruptly. */
const live = new Set<ManagedProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.killNow();
  });
}

export class ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly log: ProcessLog;
  readonly exited: Promise<ExitInfo>;
  exitInfo: ExitInfo | undefined;
  private stopping = false;
  private readonly child: ChildProcess;
  private readonly outputDone: Promise<void>;

  constructor(o: ManagedProcessOptions) {
    this.name = o.name;
    this.log = new ProcessLog(o.name, o.logDir, o.classify, o.sink);
    this.log.note(`starting: ${o.command} ${o.args.join(' ')}`);
    // Own process group (detached): a Ctrl-C in the terminal reaches only the supervisor, which stops
    // the children in order instead of all of them dying at once.
    this.child = spawn(o.command, o.args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const child = this.child;
    const spawnError = new Promise<Error | undefined>((resolve) => {
      child.once('error', (err) => resolve(err));
      child.once('spawn', () => resolve(undefined));
    });
    this.pid = child.pid ?? -1;
    const readers = (['stdout', 'stderr'] as const).map((which) => {
      const source = child[which];
      if (!source) return Promise.resolve();
      const rl = createInterface({ input: source, crlfDelay: Infinity });
      rl.on('line', (l) => this.log.line(l, which));
      return new Promise<void>((resolve) => rl.once('close', () => resolve()));
    });
    this.outputDone = Promise.all(readers).then(() => undefined);
    this.exited = new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        live.delete(this);
        resolve(this.exitInfo);
      });
      void spawnError.then((err) => {
        if (err) {
          this.log.line(`could not start ${o.command}: ${err.message}`, 'stderr');
          this.exitInfo = { code: -1, signal: null };
          live.delete(this);
          resolve(this.exitInfo);
        }
      });
    });
    void this.exited.then((info) => {
      this.log.note(`exited: code ${info.code} signal ${info.signal}`);
      if (!this.stopping) o.onUnexpectedExit?.(this, info);
    });
    if (child.pid !== undefined) {
      live.add(this);
      installExitHook();
    }
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  describeExit(): string {
    const i = this.exitInfo;
    if (!i) return 'running';
    return i.signal ? `killed by ${i.signal}` : `exited with code ${i.code}`;
  }

  private signal(sig: NodeJS.Signals, group = false): void {
    if (!this.running || this.pid <= 0) return;
    try {
      // The group id of a detached child is its PID; the group also holds helpers it spawned.
      process.kill(group ? -this.pid : this.pid, sig);
    } catch {
      if (group) {
        try {
          process.kill(this.pid, sig);
        } catch {
          // already gone
        }
      }
    }
  }

  /**
   * After the process has exited: SIGKILL whatever is left in its process group. A PID is not reused
   * while a group of that id exists, so this reaches only what the child left behind, or nothing.
   */
  private killGroupRemnants(): void {
    if (this.pid <= 0) return;
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      // no group left
    }
  }

  /** Synchronous last resort (process exit): SIGKILL the process group. */
  killNow(): void {
    this.stopping = true;
    this.signal('SIGKILL', true);
  }

  /** SIGTERM, wait up to graceMs, then SIGKILL; resolves when the process has exited and its log is flushed. */
  async stop(graceMs = 15_000): Promise<ExitInfo> {
    this.stopping = true;
    this.log.quiet = true;
    if (this.running) {
      this.log.note(`stopping (SIGTERM to ${this.pid})`);
      this.signal('SIGTERM');
      const exitedInTime = await withTimeout(this.exited, graceMs);
      if (!exitedInTime && this.running) {
        this.log.note(`did not stop within ${graceMs} ms: SIGKILL`);
        this.log.line(`did not stop within ${graceMs} ms; killed`, 'stderr');
        this.signal('SIGKILL', true);
      }
    }
    const info = await this.exited;
    this.killGroupRemnants();
    await withTimeout(this.outputDone, 2000);
    await this.log.close();
    return info;
  }
}

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The value of the promise, or undefined when it has not settled within ms (the timer is cleared either way). */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The full path of an executable on the PATH, or undefined. */
export async function which(command: string): Promise<string | undefined> {
  const { access, constants } = await import('node:fs/promises');
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}
