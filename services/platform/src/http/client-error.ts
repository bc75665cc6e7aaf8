import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ErrorKind, errorBody, errorBodyOf, invalidFields } from '../errors.js';

/** What Node's parser refuses gets the API's error body, not a bare status line (decisions 0122, 0153). */
export function answerClientErrors(server: Server, maxHeaderSize: number): void {
  const tooLarge = `The request line and headers exceed ${Math.round(maxHeaderSize / 1024)} KB`;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const kind: ErrorKind =
      err.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'invalid';
    const message =
      kind === 'headers_too_large'
        ? tooLarge
        : kind === 'request_timeout'
          ? 'The request took too long to arrive'
          : 'Malformed HTTP request';
    const body = kind === 'invalid' ? errorBodyOf(invalidFields([{ field: 'request', message }], message)) : errorBody(kind, message);
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${body.statusCode} ${body.error}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  });
}
