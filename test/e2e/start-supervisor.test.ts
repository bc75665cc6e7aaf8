import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { type ExitInfo, ManagedProcess, pinoClassifier } from '../../scripts/processes.js';
import { type RestartPolicy, Supervisor } from '../../scripts/supervisor.js';

/** `npm start`'s supervision of its children, with real child processes killed by SIGKILL. */
describe('npm start: a child that dies is restarted with a backoff, one that keeps dying is given up on', () => {
  let logDir: string;
  const supervisors: Supervisor[] = [];
  const policy: RestartPolicy = { initialDelayMs: 100, maxDelayMs: 400, maxRestarts: 3, windowMs: 60_000 };

  const supervise = (script: string, events: ConstructorParameters<typeof Supervisor>[2] = {}) => {
    const s = new Supervisor(
      (sup) =>
        new ManagedProcess({
          name: 'child',
          command: process.execPath,
          args: ['-e', script],
          cwd: logDir,
          env: process.env,
          logDir,
          classify: pinoClassifier,
          sink: () => undefined,
          onUnexpectedExit: (p, info) => sup.exited(p, info),
        }),
      policy,
      events,
    );
    supervisors.push(s);
    return s;
  };

  beforeEach(() => {
    logDir = mkdtempSync(path.join(tmpdir(), 'svc-supervisor-'));
  });
  afterEach(async () => {
    await Promise.all(supervisors.splice(0).map((s) => s.stop(2000)));
    rmSync(logDir, { recursive: true, force: true });
  });

  it('starts a child killed with SIGKILL again after the first backoff, and says so in its log', async () => {
    const restarts: [ExitInfo, number, number][] = [];
    const s = supervise('console.log("up"); setInterval(() => {}, 1000)', {
      onRestart: (_p, info, attempt, delayMs) => restarts.push([info, attempt, delayMs]),
    });
    const first = s.current;
    await eventually(() => expect(readFileSync(first.log.file, 'utf8')).to.contain('up'));
    process.kill(first.pid, 'SIGKILL');
    await eventually(() => expect(s.current).to.not.equal(first));
    const second = s.current;
    expect(second.pid).to.not.equal(first.pid);
    expect(second.running).to.equal(true);
    expect(restarts).to.deep.equal([[{ code: null, signal: 'SIGKILL' }, 1, 100]]);
    expect(readFileSync(first.log.file, 'utf8')).to.contain('exited unexpectedly (killed by SIGKILL): restart 1 in 100 ms');
    // The backoff doubles for the next death within the window.
    process.kill(second.pid, 'SIGKILL');
    await eventually(() => expect(s.current).to.not.equal(second));
    expect(restarts.map(([, attempt, delay]) => [attempt, delay])).to.deep.equal([
      [1, 100],
      [2, 200],
    ]);
    expect(s.current.running).to.equal(true);
  });

  it('gives up on a child that keeps crashing: more than maxRestarts within the window', async () => {
    let gaveUp: number | undefined;
    const delays: number[] = [];
    const s = supervise('process.exit(3)', {
      onRestart: (_p, _info, _attempt, delayMs) => delays.push(delayMs),
      onGiveUp: (_p, info, restarts) => {
        expect(info.code).to.equal(3);
        gaveUp = restarts;
      },
    });
    await eventually(() => expect(gaveUp).to.equal(3), 10_000);
    expect(delays).to.deep.equal([100, 200, 400]);
    expect(s.current.running).to.equal(false);
  });

  it('never restarts a child it was asked to stop', async () => {
    let restarted = 0;
    const s = supervise('setInterval(() => {}, 1000)', { onRestart: () => restarted++ });
    const info = await s.stop(2000);
    expect(info.signal).to.equal('SIGTERM');
    expect(restarted).to.equal(0);
    expect(s.current.running).to.equal(false);
  });
});
