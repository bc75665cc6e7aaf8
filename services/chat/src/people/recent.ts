/** Answers kept for `ttlMs` per key, at most `max` keys (all dropped past it); a failed answer is not kept. */
export class Recent<V> {
  private readonly held = new Map<string, { at: number; value: Promise<V> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const at = this.now();
    const hit = this.held.get(key);
    if (hit && at - hit.at < this.ttlMs) return hit.value;
    const value = load();
    const entry = { at, value };
    value.catch(() => {
      if (this.held.get(key) === entry) this.held.delete(key);
    });
    if (this.held.size >= this.max) this.held.clear();
    this.held.set(key, entry);
    return value;
  }
}
