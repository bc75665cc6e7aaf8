/**
 * Batches the items added under one key, one batch per key at a time, so a hot key is one statement for many requests.
 * An item added while its key's batch runs waits for the next batch: the work for an item always starts after the item
 * was added, so it sees everything committed before (the check's views and the task counts rely on it).
 */
export class KeyedBatcher<I, O> {
  private readonly keys = new Map<string, { queue: Waiting<I, O>[]; busy: boolean }>();

  constructor(
    private readonly work: (key: string, items: I[]) => Promise<(O | undefined)[]>,
    private readonly maxBatch = 200,
  ) {}

  add(key: string, item: I): Promise<O | undefined> {
    return new Promise((resolve, reject) => {
      let state = this.keys.get(key);
      if (!state) {
        state = { queue: [], busy: true };
        this.keys.set(key, state);
        setImmediate(() => this.next(key));
      }
      state.queue.push({ item, resolve, reject });
    });
  }

  private next(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    if (!state.queue.length) {
      this.keys.delete(key);
      return;
    }
    const batch = state.queue.splice(0, this.maxBatch);
    this.work(
      key,
      batch.map((b) => b.item),
    )
      .then(
        (out) => {
          for (const [i, b] of batch.entries()) b.resolve(out[i]);
        },
        (err: unknown) => {
          for (const b of batch) b.reject(err);
        },
      )
      .finally(() => this.next(key));
  }
}

interface Waiting<I, O> {
  item: I;
  resolve: (o: O | undefined) => void;
  reject: (err: unknown) => void;
}
