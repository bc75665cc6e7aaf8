/**
 * The least a Node service can do for one page of GET /chats (decision 0265): a bare node:http server that sends
 * chat's very list statement (LIST_TEXT, LIST_VALUES as JSON) over one pg pool, as a prepared statement, and answers
 * `{"records": <the rows, every column as Postgres's text>, "total": n}`. No identity, validation, views, cursor or metrics: a lower
 * bound for chat's own CPU per page, and with a bare forward in front, for the whole path. Prints `listening <port>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

/** Every column as Postgres's text: no Date, number or JSON parsing. */
const asText = { getTypeParser: () => (value: string) => value };
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8, options: '-c search_path=chat', types: asText });
const text = process.env.LIST_TEXT ?? '';
const values = JSON.parse(process.env.LIST_VALUES ?? '[]') as unknown[];

const server = http.createServer((_req, res) => {
  pool.query<{ listTotal: number }>({ name: 'bare_list', text, values }).then(
    ({ rows }) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ records: rows, total: rows[0]?.listTotal ?? 0 }));
    },
    (err: Error) => {
      res.writeHead(500);
      res.end(err.message);
    },
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${(server.address() as AddressInfo).port}`));
process.on('SIGTERM', () => {
  server.close();
  void pool.end();
  server.closeAllConnections();
});
