import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import type { AppError } from '../src/errors.js';
import { readMultipart } from '../src/http/multipart.js';

/** What the reader handed on: fields, files (with their bytes), or the refusal. */
interface Outcome {
  fields: Record<string, string>;
  files: { name: string; filename: string | undefined; data: string }[];
  error?: { status: number; message: string; fields?: unknown };
}

const BOUNDARY = 'XyZ-boundary';

/** Reads `body` as a request with `contentType`, delivered in chunks of `chunk` bytes. */
function read(body: Buffer, contentType = `multipart/form-data; boundary=${BOUNDARY}`, chunk = body.length || 1): Promise<Outcome> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < body.length; i += chunk) chunks.push(body.subarray(i, i + chunk));
  const req = Readable.from(chunks) as unknown as IncomingMessage;
  req.headers = { 'content-type': contentType };
  const outcome: Outcome = { fields: {}, files: [] };
  return new Promise((resolve) => {
    const pending: Promise<void>[] = [];
    readMultipart(
      req,
      { limits: { fileSize: 1024, files: 2, fields: 5, fieldSize: 100 }, fieldKind: 'text' },
      {
        field: (name, value) => {
          outcome.fields[name] = value;
        },
        file: (name, stream, info) => {
          // In the order the parts came, however their bytes end.
          const file = { name, filename: info.filename, data: '' };
          outcome.files.push(file);
          pending.push(
            (async () => {
              const parts: Buffer[] = [];
              for await (const c of stream) parts.push(c as Buffer);
              file.data = Buffer.concat(parts).toString();
            })(),
          );
        },
        error: (err: AppError) => {
          outcome.error = { status: err.kind === 'invalid' ? 400 : 0, message: err.message, fields: err.details?.fields };
          resolve(outcome);
        },
        close: () => void Promise.all(pending).then(() => resolve(outcome)),
      },
    );
  });
}

const part = (disposition: Buffer | string, data: string, type = 'text/plain') =>
  Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: `),
    Buffer.from(disposition),
    Buffer.from(`\r\nContent-Type: ${type}\r\n\r\n${data}\r\n`),
  ]);
const form = (...parts: Buffer[]) => Buffer.concat([Buffer.from('preamble\r\n'), ...parts, Buffer.from(`--${BOUNDARY}--\r\nepilogue`)]);
const fileNamed = (name: Buffer) => Buffer.concat([Buffer.from('form-data; name="file"; filename="'), name, Buffer.from('"')]);

describe('the multipart reader every service uses (decision 0170)', () => {
  const good = form(
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="body"\r\n\r\nhi\r\nthere\r\n`),
    part('form-data; name="file"; filename="relatório.txt"', `x\r\n--${BOUNDARY.slice(0, 5)} not a delimiter`),
    part('form-data; name="second"; filename="b.txt"', ''),
  );

  it('hands on every field and file whole, however the body is cut into chunks', async () => {
    for (const chunk of [1, 2, 3, 7, 16, 64, good.length]) {
      const got = await read(good, undefined, chunk);
      expect(got.error, `chunks of ${chunk}`).to.equal(undefined);
      expect(got.fields, `chunks of ${chunk}`).to.deep.equal({ body: 'hi\r\nthere' });
      expect(got.files, `chunks of ${chunk}`).to.deep.equal([
        { name: 'file', filename: 'relatório.txt', data: `x\r\n--${BOUNDARY.slice(0, 5)} not a delimiter` },
        { name: 'second', filename: 'b.txt', data: '' },
      ]);
    }
  });

  it('answers a missing boundary, or a body that is not multipart, with a 400 naming the body', async () => {
    for (const type of ['multipart/form-data', 'multipart/form-data; boundary=', 'application/json']) {
      const got = await read(good, type);
      expect(got.error, type).to.deep.equal({
        status: 400,
        message: 'body: must be multipart/form-data with a boundary',
        fields: [{ field: 'body', message: 'must be multipart/form-data with a boundary' }],
      });
    }
  });

  it('refuses a file name holding a raw control byte with a 400 naming the part, never dropping the part', async () => {
    for (const byte of [0x01, 0x08, 0x0a, 0x0d, 0x1b, 0x7f]) {
      for (const chunk of [1, 5, 4096]) {
        const body = form(part(fileNamed(Buffer.from([0x61, byte, 0x62])), 'data'));
        const got = await read(body, undefined, chunk);
        expect(got.error?.message, `byte ${byte}, chunks of ${chunk}`).to.equal('file.filename: must not contain control characters');
        expect(got.files).to.deep.equal([]);
      }
    }
    const nul = await read(form(part(fileNamed(Buffer.from([0x61, 0, 0x62])), 'data')));
    expect(nul.error?.message).to.equal('file.filename: must not contain NUL characters or unpaired UTF-16 surrogates');
    const crlf = await read(form(part(fileNamed(Buffer.from('a\r\n\r\nb')), 'data')));
    expect(crlf.error?.message).to.equal('file.filename: must not contain control characters');
  });

  it('names the part whose name or other header holds a control byte', async () => {
    const name = await read(form(part(Buffer.from('form-data; name="a\x1bb"'), 'v')));
    expect(name.error?.message).to.equal('a\\u001bb: must not contain control characters');
    const other = await read(
      form(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\nX-Other: a\x01b\r\n\r\nv\r\n`)),
    );
    expect(other.error?.message).to.equal('note: its part header must not contain control characters');
  });

  it('answers malformed bodies and limits with a 400 naming the body or the field', async () => {
    expect((await read(Buffer.from(`--${BOUNDARY}\r\nno header end`))).error?.message).to.equal('body: malformed multipart/form-data');
    const long = await read(form(part('form-data; name="note"', 'x'.repeat(101))));
    expect(long.error?.message).to.equal('note: must be at most 100 bytes');
    const files = await read(form(...['a', 'b', 'c'].map((n) => part(`form-data; name="${n}"; filename="${n}.txt"`, n))));
    expect(files.error?.message).to.equal('body: at most 2 files');
  });
});
