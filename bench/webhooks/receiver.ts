/**
 * The webhook receiver of the bench, in its own process (started with child_process.fork): a bare
 * node:http server answering 200 at once, which notes for every request the `x-svc-event-id` header (or
 * `x-bench-id` for the POST loop) and the monotonic time it arrived (microseconds; CLOCK_MONOTONIC, the
 * same clock in every process of the machine). The parent asks over IPC:
 *   {cmd: 'count'}            -> {count, unique}
 *   {cmd: 'take'}             -> {receipts: [id, us][]} (first receipt of each id since the last reset)
 *   {cmd: 'reset'}            -> {ok: true}
 * Prints nothing; sends {listening: port} once it accepts connections.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

let count = 0;
const firstSeen = new Map<string, number>();

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const at = nowUs();
  const id = (req.headers['x-svc-event-id'] ?? req.headers['x-bench-id']) as string | undefined;
  count++;
  if (id && !firstSeen.has(id)) firstSeen.set(id, at);
  // Answer at once; the body is drained so the connection can be reused.
  req.resume();
  res.writeHead(200, { 'content-length': 0 });
  res.end();
});
server.listen(0, '127.0.0.1', () => process.send?.({ listening: (server.address() as AddressInfo).port }));

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'count') process.send?.({ count, unique: firstSeen.size });
  else if (m.cmd === 'take') process.send?.({ receipts: [...firstSeen] });
  else if (m.cmd === 'reset') {
    count = 0;
    firstSeen.clear();
    process.send?.({ ok: true });
  }
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
process.once('disconnect', () => process.exit(0));
