import type { Readable } from 'node:stream';

/**
 * Where file bytes live. Every implementation streams both ways: `put` consumes its stream with backpressure and
 * holds at most a bounded window of it in memory, `get` returns a stream.
 */
export interface FileStorage {
  readonly kind: 'local' | 's3';
  /** Stores the whole stream under `key` (replacing nothing: keys are fresh ids); rejects with the stream's error. */
  put(key: string, body: Readable): Promise<void>;
  /** The bytes under `key`, or null when there are none. */
  get(key: string): Promise<Readable | null>;
  /** Removes `key`; absent keys are not an error. */
  delete(key: string): Promise<void>;
  /** Throws when the storage cannot be reached (readiness). */
  check(): Promise<void>;
}
