import type { Readable } from 'node:stream';

/** `put` consumes its stream with backpressure and holds a bounded window in memory. */
export interface FileStorage {
  readonly kind: 'local' | 's3';
  /** Keys are fresh ids; rejects with the stream's error. */
  put(key: string, body: Readable): Promise<void>;
  /** Null when there are none. */
  get(key: string): Promise<Readable | null>;
  /** Absent keys are not an error. */
  delete(key: string): Promise<void>;
  /** For readiness. */
  check(): Promise<void>;
}
