import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { REPO_ROOT } from '../support/processes.js';
import { type Stack, startStack } from '../support/stack.js';

const run = promisify(execFile);

/** Node 20 where the machine has it (the oldest the packages promise), else the Node running the tests. */
const PLAIN_NODE = existsSync('/usr/bin/node') ? '/usr/bin/node' : process.execPath;
/**
 * The environment of an integrator's shell: no tsx loader, none of the npm script's own variables (its prefix and
 * workspace would point npm at this repository); the registry and CA settings (`npm_config_*`) are kept.
 */
const NPM_SCRIPT_ONLY = /^npm_config_(local_prefix|prefix|workspaces?|global|include_workspace_root)$/i;
const plainEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => k !== 'NODE_OPTIONS' && (!k.startsWith('npm_') || (k.startsWith('npm_config_') && !NPM_SCRIPT_ONLY.test(k))),
    ),
  );

async function pack(folder: string, into: string): Promise<{ file: string; files: string[] }> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', into], { cwd: join(REPO_ROOT, folder), env: plainEnv() });
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  return { file: join(into, info!.filename), files: info!.files.map((f) => f.path) };
}

const USE = (mod: (name: string) => string) => `
const { createClient, ApiError } = ${mod('@svc/client')};
const { verifyWebhook, WebhookVerificationError } = ${mod('@svc/webhook-verify')};
const { createHmac } = ${mod('node:crypto')};
const [baseUrl, key] = process.argv.slice(2);
const api = createClient({ baseUrl, key });
const created = await api.POST('/leads', { body: { title: 'From a plain project' } });
const read = await api.GET('/leads/{ref}', { params: { path: { ref: created.data.id } } });
const refused = await api.POST('/leads', { body: { title: '' } });
const body = JSON.stringify({ event_id: 'evt_1', event_key: 'lead.created', payload: {} });
const at = Math.floor(Date.now() / 1000);
const signature = 'v1,' + createHmac('sha256', 'plain-secret').update('evt_1.' + at + '.' + body).digest('base64');
const event = verifyWebhook({ body, headers: { 'Webhook-Id': 'evt_1', 'Webhook-Timestamp': String(at), 'Webhook-Signature': signature }, secrets: ['plain-secret'] });
let forged = false;
try { verifyWebhook({ body, headers: {}, secrets: ['plain-secret'] }); } catch (e) { forged = e instanceof WebhookVerificationError; }
console.log(JSON.stringify({
  created: created.response.status, title: read.data.title,
  refused: refused.error instanceof ApiError, status: refused.error.status, request_id: refused.error.request_id,
  event: event.event_key, forged,
}));
`;

/**
 * The packages as an integrator gets them (issue 22): `npm pack` of @svc/client and @svc/webhook-verify installed
 * into a new project outside the repository, imported by plain Node (no tsx, no bundler) as ESM and as CommonJS,
 * against the running stack, and their declarations checked by tsc from that project.
 */
describe('the packed client and verifier, installed into a plain Node project', function () {
  this.timeout(180_000);
  let stack: Stack;
  let t: Tenant;
  let scratch: string;
  const packed: Record<string, { file: string; files: string[] }> = {};

  before(async () => {
    stack = await startStack();
    t = await seedTenant(client(stack.gatewayUrl).call, stack.adminToken);
    scratch = await mkdtemp(join(tmpdir(), 'svc-packages-'));
    packed.client = await pack('packages/client', scratch);
    packed.verify = await pack('packages/webhook-verify', scratch);
    await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', packed.client.file, packed.verify.file], {
      cwd: scratch,
      env: plainEnv(),
    });
  });
  after(async () => {
    await stack?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('packs JavaScript, CommonJS and declarations, not the TypeScript source', () => {
    for (const { files } of Object.values(packed)) {
      expect(files).to.include.members(['package.json', 'dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts']);
      expect(files.filter((f) => f.startsWith('src/'))).to.deep.equal([]);
    }
    expect(packed.client!.files).to.include.members(['dist/schema.d.ts', 'openapi.json']);
  });

  for (const [kind, file, mod] of [
    ['an ES module', 'use.mjs', (m: string) => `await import('${m}')`],
    ['CommonJS', 'use.cjs', (m: string) => `require('${m}')`],
  ] as const) {
    it(`works from ${kind} on plain Node: a lead created and read, a typed error with its request id, a delivery verified`, async () => {
      const source = file.endsWith('.cjs') ? `(async () => {${USE(mod)}})();` : USE(mod);
      await writeFile(join(scratch, file), source);
      const { stdout } = await run(PLAIN_NODE, [file, stack.gatewayUrl, t.key.key], { cwd: scratch, env: plainEnv() });
      const out = JSON.parse(stdout);
      expect(out).to.include({
        created: 201,
        title: 'From a plain project',
        refused: true,
        status: 400,
        event: 'lead.created',
        forged: true,
      });
      expect(out.request_id).to.be.a('string').and.match(/./);
    });
  }

  it('gives TypeScript projects the declarations: typed paths and bodies, a wrong path refused', async () => {
    await writeFile(
      join(scratch, 'typed.ts'),
      `import { createClient, type Schemas } from '@svc/client';
import { verifyWebhook } from '@svc/webhook-verify';
const api = createClient({ baseUrl: 'http://localhost', key: 'k' });
export async function f(): Promise<string | undefined> {
  const { data } = await api.GET('/leads/{ref}', { params: { path: { ref: '1' } } });
  const title: string | undefined = data?.title;
  verifyWebhook({ body: '', headers: {}, secrets: [] });
  // @ts-expect-error: not an operation of the document
  await api.GET('/no-such-path');
  const lead: Partial<Schemas['CreationResponse']> = {};
  return title ?? lead.id;
}
`,
    );
    const tsc = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
    const typeRoots = join(REPO_ROOT, 'node_modules/@types');
    await run(process.execPath, [tsc, ...args, '--typeRoots', typeRoots, '--types', 'node', 'typed.ts'], { cwd: scratch, env: plainEnv() });
  });
});
