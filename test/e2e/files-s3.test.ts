/// <reference path="../../services/files/test/s3rver.d.ts" />
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import S3rver from 's3rver';
import { client } from '../support/client.js';
import { generated, postMultipart } from '../support/files.js';
import { seedTenant } from '../support/fixtures.js';
import { salesRoutes } from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

/** The files service configured for S3 (FILES_STORAGE=s3), against an S3-compatible server on loopback (decision 0075). */
describe('files: stored in an S3-compatible bucket', function () {
  this.timeout(120_000);
  let server: S3rver;
  let dir: string;
  let stack: Stack;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 's3rver-'));
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: 'svc-files' }] });
    const { port } = await server.run();
    stack = await startStack({
      files: {
        FILES_STORAGE: 's3',
        S3_BUCKET: 'svc-files',
        S3_ENDPOINT: `http://127.0.0.1:${port}`,
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_PREFIX: 'tenant-files/',
        FILES_MAX_BYTES: String(20 * 1024 * 1024),
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('uploads through the gateway into the bucket (multipart), downloads through a signed URL, 413 over the limit', async () => {
    const { call } = client(stack.gatewayUrl);
    const t = await seedTenant(call, stack.adminToken);
    const lead = await salesRoutes(call, 'leads', () => t).created({ title: 'S3' });
    const size = 11 * 1024 * 1024 + 3;
    const res = await postMultipart(`${stack.gatewayUrl}/integrations/external/files`, t.key.key, [
      { name: 'crm_lead_id', value: lead.id },
      { name: 'file', filename: 'in-s3.txt', data: generated(size) },
    ]);
    expect(res.status, res.text).to.equal(201);
    const file = res.body as { id: string; url: string; file_size: number; mime_type: string };
    expect(file).to.include({ file_size: size, mime_type: 'text/plain' });
    const download = await fetch(file.url);
    expect(download.status).to.equal(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.length).to.equal(size);
    expect(bytes.subarray(0, 20).toString()).to.equal('abcdefghij0123456789');
    const over = await postMultipart(`${stack.gatewayUrl}/integrations/external/files`, t.key.key, [
      { name: 'crm_lead_id', value: lead.id },
      { name: 'file', filename: 'too-big.bin', data: generated(21 * 1024 * 1024) },
    ]);
    expect(over.status, over.text).to.equal(413);
  });
});
