/**
 * Postgres CPU split by who asked for it: each backend of the bench's database labelled by its
 * `application_name` (the bench starts every service with PGAPPNAME=<service>, the producer with
 * `bench-producer`), the server's own processes (WAL writer, checkpointer, ...) and the backends of other
 * databases (someone else's load on the shared machine). CPU from /proc/<pid>/stat, like bench/lib/cpu.ts.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';

const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

function cpuSeconds(pid: number): number | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return undefined;
  }
}

interface Backend {
  pid: number;
  label: string;
}

export interface PgCpuSnapshot {
  at: number;
  cpu: Map<number, { label: string; seconds: number }>;
}

export class PgCpu {
  private client: pg.Client | undefined;
  constructor(
    private readonly adminUrl: string,
    private readonly database: string,
  ) {}

  async open(): Promise<void> {
    this.client = new pg.Client({ connectionString: this.adminUrl, application_name: 'bench-pgcpu' });
    await this.client.connect();
  }

  private async backends(): Promise<Backend[]> {
    const { rows } = await this.client!.query<{ pid: number; datname: string | null; application_name: string; backend_type: string }>(
      'select pid, datname, application_name, backend_type from pg_stat_activity where pid <> pg_backend_pid()',
    );
    return rows.map((r) => ({
      pid: r.pid,
      label:
        r.backend_type !== 'client backend'
          ? 'server processes'
          : r.datname !== this.database
            ? 'other databases'
            : r.application_name || 'unnamed',
    }));
  }

  async snapshot(): Promise<PgCpuSnapshot> {
    const cpu = new Map<number, { label: string; seconds: number }>();
    for (const b of await this.backends()) {
      const seconds = cpuSeconds(b.pid);
      if (seconds !== undefined) cpu.set(b.pid, { label: b.label, seconds });
    }
    return { at: performance.now(), cpu };
  }

  /** Cores per label between two snapshots; a backend that started in between counts from 0. */
  static cores(a: PgCpuSnapshot, b: PgCpuSnapshot): Record<string, number> {
    const seconds = (b.at - a.at) / 1000;
    const out: Record<string, number> = {};
    for (const [pid, { label, seconds: end }] of b.cpu) {
      const used = end - (a.cpu.get(pid)?.seconds ?? 0);
      out[label] = (out[label] ?? 0) + used / seconds;
    }
    return out;
  }

  async close(): Promise<void> {
    await this.client?.end().catch(() => undefined);
  }
}
