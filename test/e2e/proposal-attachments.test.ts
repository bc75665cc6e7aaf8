import { readdir } from 'node:fs/promises';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { generated, type Part, PDF_BYTES, postMultipart } from '../support/files.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { salesRoutes } from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

const LIMIT = 256 * 1024;

/**
 * Files uploaded to a proposal (decision 0078): `POST /proposals/{id}/attachments` goes through the gateway to the files
 * service, which asks crm whether the proposal is visible, stores the file and registers it as an attachment in crm.
 */
describe('proposal attachments: files uploaded to a proposal', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  let lead: { id: string };
  let proposal: any;
  const pdf: Part = { name: 'file', filename: 'quote.pdf', contentType: 'text/plain', data: PDF_BYTES };
  const attach = (proposalId: string, parts: Part[], token: string | null = t.key.key) =>
    postMultipart(`${stack.gatewayUrl}/integrations/external/proposals/${proposalId}/attachments`, token ?? undefined, parts);
  const fileRows = async () => (await db.query('select count(*)::int as n from files.files')).rows[0].n as number;
  /** Every file in the files service's local storage (company / file id), partial ones included. */
  const storedFiles = async () => {
    const root = (stack.services.files!.ctx.config as unknown as { FILES_LOCAL_DIR: string }).FILES_LOCAL_DIR;
    return (await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []))
      .filter((e) => e.isFile())
      .map((e) => `${e.parentPath}/${e.name}`)
      .sort();
  };

  before(async () => {
    stack = await startStack({ files: { FILES_MAX_BYTES: String(LIMIT) } });
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    db = new pg.Client({ connectionString: stack.db.url });
    await db.connect();
    t = await seedTenant(call, stack.adminToken);
    other = await seedTenant(call, stack.adminToken);
    lead = await salesRoutes(call, 'leads', () => t).created({ title: 'Attachments' });
    proposal = (
      await call('POST', '/integrations/external/proposals', { token: t.key.key, body: { crm_lead_id: lead.id, title: 'Quote' } })
    ).body;
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('stores the file, lists it with the proposal, serves it through its signed URL and GET /files/{id}', async () => {
    const res = await attach(proposal.id, [pdf]);
    expect(res.status, res.text).to.equal(201);
    const a = res.body as any;
    expect(a).to.include({
      kind: 'file',
      document_id: null,
      file_name: 'quote.pdf',
      mime_type: 'application/pdf',
      file_size: PDF_BYTES.length,
    });
    const download = await fetch(a.url);
    expect(Buffer.from(await download.arrayBuffer()).equals(PDF_BYTES)).to.equal(true);
    const p = (await call('GET', `/integrations/external/proposals/${proposal.id}`, { token: t.key.key })).body;
    expect(p.attachments).to.have.length(1);
    expect(p.attachments[0]).to.include({
      id: a.id,
      kind: 'file',
      file_id: a.file_id,
      file_name: 'quote.pdf',
      mime_type: 'application/pdf',
    });
    const file = await call('GET', `/integrations/external/files/${a.file_id}`, { token: t.key.key });
    expect(file.status).to.equal(200);
    expect(file.body).to.include({ crm_proposal_id: proposal.id, crm_lead_id: null });
    expect((await salesRoutes(call, 'leads', () => t).detail(lead.id)).associations_count.files).to.equal(0);
  });

  it('removing the file (DELETE /files/{id}) removes the attachment; removing the attachment hides the file', async () => {
    const first = (await attach(proposal.id, [pdf])).body as any;
    expect((await call('DELETE', `/integrations/external/files/${first.file_id}`, { token: t.key.key })).body).to.deep.equal({
      success: true,
    });
    let p = (await call('GET', `/integrations/external/proposals/${proposal.id}`, { token: t.key.key })).body;
    expect(p.attachments.map((x: any) => x.id)).to.not.include(first.id);
    const second = (await attach(proposal.id, [pdf])).body as any;
    const removed = await call('DELETE', `/integrations/external/proposals/${proposal.id}/attachments/${second.id}`, { token: t.key.key });
    expect(removed.status, removed.text).to.equal(200);
    p = removed.body;
    expect(p.attachments.map((x: any) => x.id)).to.not.include(second.id);
    expect((await call('GET', `/integrations/external/files/${second.file_id}`, { token: t.key.key })).status).to.equal(404);
  });

  it('413 over the size limit, 400 without a file, nothing stored', async () => {
    const before = await fileRows();
    const big = await attach(proposal.id, [{ name: 'file', filename: 'big.bin', data: generated(LIMIT + 1) }]);
    expect(big.status, big.text).to.equal(413);
    const none = await attach(proposal.id, [{ name: 'note', value: 'x' }]);
    expect(none.status).to.equal(400);
    expect(none.body.message).to.contain('file');
    expect(await fileRows()).to.equal(before);
  });

  it('400 naming the field for a file name or a field that breaks the text rule (decision 0135), nothing stored', async () => {
    const attachments = async () =>
      (await call('GET', `/integrations/external/proposals/${proposal.id}`, { token: t.key.key })).body.attachments.length as number;
    const before = { rows: await fileRows(), files: await storedFiles(), attachments: await attachments() };
    expect(before.files).to.not.deep.equal([]);
    const nul = await attach(proposal.id, [{ ...pdf, filenameStar: "UTF-8''a%00.pdf" }]);
    expect(nul.status, nul.text).to.equal(400);
    expect(nul.body.message).to.equal('file.filename: must not contain NUL characters or unpaired UTF-16 surrogates');
    const control = await attach(proposal.id, [{ ...pdf, filename: 'quo\u0085te.pdf' }]);
    expect(control.body.message, control.text).to.equal('file.filename: must not contain control characters');
    const bytes = await attach(proposal.id, [{ ...pdf, filename: Buffer.from([0x71, 0xff, 0x2e, 0x70, 0x64, 0x66]) }]);
    expect(bytes.body.message).to.equal('file.filename: must be UTF-8');
    const field = await attach(proposal.id, [{ name: 'note', value: Buffer.from([0xff]) }, pdf]);
    expect(field.body.message).to.equal('note: must be UTF-8');
    expect(await fileRows()).to.equal(before.rows);
    expect(await storedFiles()).to.deep.equal(before.files);
    expect(await attachments()).to.equal(before.attachments);
  });

  it("401 without a key, 403 without crm/proposals.write, 404 for another company's or an unknown proposal", async () => {
    const before = await fileRows();
    expect((await attach(proposal.id, [pdf], null)).status).to.equal(401);
    const key = (
      await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/files.write'] })
    ).body.key;
    const refused = await attach(proposal.id, [pdf], key);
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.contain('crm/proposals.write');
    const foreign = await attach(proposal.id, [pdf], other.key.key);
    expect(foreign.status).to.equal(404);
    expect(foreign.body).to.deep.equal({ statusCode: 404, message: 'Proposal not found', error: 'Not Found' });
    expect((await attach(crypto.randomUUID(), [pdf])).status).to.equal(404);
    expect((await attach('nope', [pdf])).status).to.equal(404);
    expect(await fileRows()).to.equal(before);
  });
});
