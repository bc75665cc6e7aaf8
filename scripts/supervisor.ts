/**
 * Keeps one child of the local stack running, as a process manager would: a child that dies unasked is started
 * again after a backoff (doubling from `initialDelayMs` up to `maxDelayMs`); one that keeps dying (more than
 * `maxRestarts` restarts within `windowMs`) is given up on, and the caller decides what that means (`npm start`
 * stops everything then).
 */
import type { ExitInfo, ManagedProcess } from './processes.js';

export interface RestartPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  maxRestarts: number;
  windowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 8000, maxRestarts: 5, windowMs: 60_000 };

export interface SupervisorEvents {
  /** The child died unasked and will be started again after `delayMs`; `attempt` counts restarts in the window. */
  onRestart?: (proc: ManagedProcess, info: ExitInfo, attempt: number, delayMs: number) => void;
  /** A restarted child is running again. */
  onRestarted?: (proc: ManagedProcess) => void;
  /** The child died more than `maxRestarts` times within `windowMs`: it stays down. */
  onGiveUp?: (proc: ManagedProcess, info: ExitInfo, restarts: number) => void;
}

/**
 * `spawn` starts the child and must call the supervisor's `exited` from the child's unexpected-exit callback
 * (ManagedProcessOptions.onUnexpectedExit), so a child asked to stop is never restarted.
 */
export class Supervisor {
  private proc: ManagedProcess;
  private readonly restarts: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly spawn: (supervisor: Supervisor) => ManagedProcess,
    private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY,
    private readonly events: SupervisorEvents = {},
    private readonly now: () => number = Date.now,
  ) {
    this.proc = spawn(this);
  }

  get current(): ManagedProcess {
    return this.proc;
  }

  /** Called by the child's unexpected-exit callback. */
  exited(proc: ManagedProcess, info: ExitInfo): void {
    if (this.stopped || proc !== this.proc) return;
    const now = this.now();
    while (this.restarts.length && this.restarts[0]! <= now - this.policy.windowMs) this.restarts.shift();
    if (this.restarts.length >= this.policy.maxRestarts) {
      this.events.onGiveUp?.(proc, info, this.restarts.length);
      return;
    }
    this.restarts.push(now);
    const attempt = this.restarts.length;
    const delayMs = Math.min(this.policy.maxDelayMs, this.policy.initialDelayMs * 2 ** (attempt - 1));
    proc.log.note(`exited unexpectedly (${proc.describeExit()}): restart ${attempt} in ${delayMs} ms`);
    // Reaps what the dead child left in its process group and closes its log; the next child appends to the file.
    void proc.stop(0);
    this.events.onRestart?.(proc, info, attempt, delayMs);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopped) return;
      this.proc = this.spawn(this);
      this.events.onRestarted?.(this.proc);
    }, delayMs);
  }

  /** No more restarts; stops the current child (SIGTERM, grace, SIGKILL). */
  async stop(graceMs?: number): Promise<ExitInfo> {
    this.stopped = true;
    clearTimeout(this.timer);
    return this.proc.stop(graceMs);
  }
}
