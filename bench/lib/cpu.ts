/**
 * CPU time of the processes involved, from /proc (Linux), so each phase can say where the two cores
 * went: the gateway, crm, Postgres (all its processes), Redis, NATS, the raw server, pgbench and this
 * process (autocannon). Printed as cores busy on average over the phase (1.00 = one core all the time).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime+stime (seconds) and comm of a PID, or undefined when it is gone. */
function stat(pid: number): { comm: string; cpu: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = s.lastIndexOf(')');
    const comm = s.slice(s.indexOf('(') + 1, close);
    const fields = s.slice(close + 2).split(' ');
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    // utime + stime, plus cutime + cstime: the time of its children that exited and were reaped (for
    // the postmaster, the backends that came and went during a phase; for this process, pgbench).
    return { comm, cpu: (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / TICKS };
  } catch {
    return undefined;
  }
}

function pidsByComm(): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (!s) continue;
    const list = out.get(s.comm) ?? [];
    list.push(Number(entry));
    out.set(s.comm, list);
  }
  return out;
}

/** Named PIDs (our children) plus every process whose comm is one of `comms` (summed per comm). */
export interface CpuTargets {
  pids: Record<string, number | undefined>;
  comms: string[];
}

export type CpuSnapshot = { at: number; perPid: Map<number, number>; byName: Map<string, number[]>; machineBusy: number };

/** Busy CPU seconds of the whole machine (all cores) since boot, from /proc/stat. */
function machineBusy(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const [, user, nice, system, _idle, _iowait, irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / TICKS;
}

export function snapshot(t: CpuTargets): CpuSnapshot {
  const perPid = new Map<number, number>();
  const byName = new Map<string, number[]>();
  for (const [name, pid] of Object.entries(t.pids)) {
    if (pid === undefined) continue;
    byName.set(name, [pid]);
  }
  const comms = pidsByComm();
  for (const comm of t.comms) byName.set(comm, comms.get(comm) ?? []);
  for (const list of byName.values()) {
    for (const pid of list) {
      const s = stat(pid);
      if (s) perPid.set(pid, s.cpu);
    }
  }
  const self = process.cpuUsage();
  perPid.set(-1, (self.user + self.system) / 1e6);
  byName.set('bench (autocannon)', [-1]);
  // Children of this process that exited and were reaped (pgbench runs; the stack is stopped before).
  perPid.set(-2, (stat(process.pid)?.cpu ?? 0) - (self.user + self.system) / 1e6);
  byName.set('exited children of bench (pgbench)', [-2]);
  return { at: performance.now(), perPid, byName, machineBusy: machineBusy() };
}

/** Cores busy per name between two snapshots (processes that exited in between count as 0). */
export function coresBusy(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  const out: Record<string, number> = {};
  for (const [name, pids] of b.byName) {
    let used = 0;
    for (const pid of pids) {
      const end = b.perPid.get(pid);
      if (end === undefined) continue;
      used += end - (a.perPid.get(pid) ?? (pid < 0 ? end : 0));
    }
    out[name] = used / seconds;
  }
  const tracked = Object.values(out).reduce((x, y) => x + y, 0);
  out['other processes'] = Math.max(0, (b.machineBusy - a.machineBusy) / seconds - tracked);
  return out;
}

export function formatCores(c: Record<string, number>): string {
  return Object.entries(c)
    .filter(([, v]) => v >= 0.005)
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
}
