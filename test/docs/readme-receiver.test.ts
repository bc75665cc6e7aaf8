/**
 * The README's first-delivery walk-through (issue 21 item 5): its receiver, run as written (only its port changed),
 * accepts a delivery signed as the webhooks service signs one and refuses a tampered or replayed one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@svc/platform/testing';
import { buildHeaders, type Delivery } from '@svc/webhooks';
import { expect } from 'chai';
import { freePort } from '../support/stack.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('docs: the README’s webhook receiver', function () {
  this.timeout(30_000);
  let child: ChildProcess;
  let dir: string;
  let url: string;
  let output = '';
  const secret = 'readme-walkthrough-secret';
  const whsec = `whsec_${Buffer.from(secret).toString('base64')}`;

  before(async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const block = /```js\n(\/\/ 2\. receiver\.mjs[\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'the receiver block of the README').to.be.a('string');
    expect(block!.split('\n').filter((l) => l.trim()).length).to.be.at.most(16);
    const port = await freePort();
    // Inside the repository, so `standardwebhooks` resolves from its node_modules as after `npm install`.
    dir = await mkdtemp(join(root, 'test', '.readme-receiver-'));
    await writeFile(join(dir, 'receiver.mjs'), block!.replace('listen(4000', `listen(${port}`));
    child = spawn(process.execPath, [join(dir, 'receiver.mjs')], { env: { ...process.env, WHSEC: whsec }, stdio: 'pipe' });
    child.stdout!.on('data', (c) => (output += c));
    child.stderr!.on('data', (c) => (output += c));
    url = `http://127.0.0.1:${port}/hooks`;
    await eventually(() =>
      fetch(url, { method: 'POST' }).then(
        () => true,
        () => undefined,
      ),
    );
  });
  after(async () => {
    child?.kill();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const delivery = { eventId: 'evt-readme', eventKey: 'lead.created', config: { secret, headers: {}, auth: null } } as unknown as Delivery;
  const body = JSON.stringify({ event_id: 'evt-readme', event_key: 'lead.created', payload: { lead: { id: 'l1' } } });
  const post = (headers: Record<string, string>, text = body) => fetch(url, { method: 'POST', headers, body: text });

  it('accepts a delivery as the webhooks service signs it', async () => {
    const res = await post(buildHeaders(delivery, body));
    expect(res.status, output).to.equal(204);
    expect(output).to.contain('lead.created');
  });

  it('refuses a tampered body, and a captured delivery sent again ten minutes later', async () => {
    expect((await post(buildHeaders(delivery, body), body.replace('l1', 'l2'))).status).to.equal(400);
    const old = Date.now() - 10 * 60 * 1000;
    expect((await post(buildHeaders(delivery, body, old))).status).to.equal(400);
  });
});
