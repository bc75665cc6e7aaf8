/**
 * The kernel's dirty page cache (Linux, /proc/meminfo). Postgres, JetStream and the benches share one disk: what a
 * phase wrote and the kernel has not written back yet goes out later in one burst (a file's dirty pages together,
 * once its oldest are vm.dirty_expire_centisecs old), and every fsync on that disk waits behind it (decision 0269).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Dirty and under writeback, MB. */
export function dirtyMb(): number {
  try {
    const m = readFileSync('/proc/meminfo', 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(m)?.[1] ?? 0);
    return (kb('Dirty') + kb('Writeback')) / 1024;
  } catch {
    return 0;
  }
}

/** Writes the dirty page cache back (sync(1)); returns the MB that were dirty and the seconds it took. */
export function writeBack(): { mb: number; seconds: number } {
  const mb = dirtyMb();
  const t0 = performance.now();
  spawnSync('sync', { stdio: 'ignore' });
  return { mb, seconds: (performance.now() - t0) / 1000 };
}

/** Samples the dirty page cache over a phase: the most it held and the largest fall within one second (a burst). */
export class DirtyWatch {
  private readonly samples: { at: number; mb: number }[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(everyMs = 250) {
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  private sample(): void {
    this.samples.push({ at: performance.now(), mb: dirtyMb() });
  }

  stop(): { maxMb: number; burstMb: number } {
    clearInterval(this.timer);
    this.sample();
    let burstMb = 0;
    for (const [i, s] of this.samples.entries())
      for (let j = i + 1; j < this.samples.length && this.samples[j]!.at - s.at <= 1000; j++)
        burstMb = Math.max(burstMb, s.mb - this.samples[j]!.mb);
    return { maxMb: Math.max(...this.samples.map((s) => s.mb)), burstMb };
  }
}
