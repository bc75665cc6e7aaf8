import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import S3rver from 's3rver';
import { S3Storage } from '../src/storage/s3.js';

const MIB = 1024 * 1024;

async function* pattern(size: number, chunk = 256 * 1024): AsyncIterable<Buffer> {
  const block = randomBytes(chunk);
  for (let sent = 0; sent < size; sent += chunk) yield size - sent >= chunk ? block : block.subarray(0, size - sent);
}
const sha256 = async (body: AsyncIterable<Uint8Array>) => {
  const h = createHash('sha256');
  for await (const c of body) h.update(c);
  return h.digest('hex');
};

/**
 * The S3 storage through the AWS SDK against s3rver, an S3-compatible server (the S3 REST wire format: path-style
 * buckets, multipart uploads, SigV4 headers accepted) on loopback with its own directory. No S3-compatible server is
 * packaged for this machine (decision 0075).
 */
describe('S3 storage against an S3-compatible server on loopback', function () {
  this.timeout(60_000);
  let server: S3rver;
  let dir: string;
  let endpoint: string;
  let storage: S3Storage;
  const storageOf = (bucket: string) =>
    new S3Storage({
      bucket,
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      prefix: 'files/',
      partSize: 5 * MIB,
      queueSize: 2,
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 's3rver-'));
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'svc-files' }] });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    storage = storageOf('svc-files');
  });
  after(async () => {
    storage?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores a 12 MiB stream as a multipart upload and reads the same bytes back', async () => {
    const size = 12 * MIB + 17;
    const sent = createHash('sha256');
    const body = Readable.from(
      (async function* () {
        for await (const c of pattern(size)) {
          sent.update(c);
          yield c;
        }
      })(),
    );
    await storage.put('c1/f1', body);
    const read = await storage.get('c1/f1');
    expect(read).to.not.equal(null);
    expect(await sha256(read as Readable)).to.equal(sent.digest('hex'));
  });

  it('stores a small file in one request and deletes it; a missing key reads as null', async () => {
    await storage.put('c1/small', Readable.from([Buffer.from('hello')]));
    expect(Buffer.concat(await (await storage.get('c1/small'))!.toArray()).toString()).to.equal('hello');
    await storage.delete('c1/small');
    expect(await storage.get('c1/small')).to.equal(null);
    expect(await storage.get('c1/never')).to.equal(null);
    await storage.delete('c1/never');
  });

  it('rejects when the stream fails midway and leaves no object behind', async () => {
    const failing = new Readable({ read() {} });
    failing.push(randomBytes(6 * MIB));
    setTimeout(() => failing.destroy(new Error('client went away')), 50);
    let error: unknown;
    try {
      await storage.put('c1/broken', failing);
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.contain('client went away');
    expect(await storage.get('c1/broken')).to.equal(null);
  });

  it('is ready when the bucket exists and not when it does not', async () => {
    await storage.check();
    const missing = storageOf('no-such-bucket');
    let failed = false;
    await missing.check().catch(() => (failed = true));
    missing.close();
    expect(failed).to.equal(true);
  });
});
