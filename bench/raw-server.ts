/**
 * The ceiling of the GET measurement: a bare node:http server, in its own process, answering every
 * request with the same JSON body (the body of a real lead detail, passed in RAW_BODY). Prints
 * `listening <port>` on stdout once it accepts connections; exits on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const body = Buffer.from(process.env.RAW_BODY ?? '{"ok":true}');
const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
