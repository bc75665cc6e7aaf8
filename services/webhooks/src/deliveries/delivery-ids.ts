import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/** Drawn from the OS in bulk: `uuid`'s v7 asks for 16 bytes per id, a cost on the hot path. */
const pool = new Uint8Array(16 * 256);
let used = pool.length;
/** Ids of one millisecond count up from a random start, so they sort in creation order. */
const clock = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/** Time-ordered and increasing within this process, like `uuid`'s v7(). */
export function deliveryId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const random = pool.subarray(used, used + 16);
  used += 16;
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    clock.seq = (clock.seq + 1) | 0;
    if (clock.seq === 0) clock.msecs++;
  }
  return v7({ random, msecs: clock.msecs, seq: clock.seq });
}
