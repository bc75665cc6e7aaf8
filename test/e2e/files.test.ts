import { readdir } from 'node:fs/promises';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { generated, type Part, PDF_BYTES, PNG_BYTES, postMultipart } from '../support/files.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { expect400, salesRoutes } from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

const LIMIT = 1024 * 1024;

/**
 * The files routes through the gateway (decisions 0075–0077): streamed uploads to the local storage with a size
 * limit, sniffed content types and sanitized names; lookup, lists, logical removal with batch totals; signed
 * downloads; crm's visibility for the key creator; the lead and deal details' `associations_count.files`.
 */
describe('files: /integrations/external/files and the signed downloads', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  let leads: ReturnType<typeof salesRoutes>;
  let deals: ReturnType<typeof salesRoutes>;
  let lead: { id: string };
  let deal: { id: string };
  const filesUrl = () => `${stack.gatewayUrl}/integrations/external/files`;
  const upload = (parts: Part[], token: string | null = t.key.key) => postMultipart(filesUrl(), token ?? undefined, parts);
  const png = (name = 'photo.png'): Part => ({ name: 'file', filename: name, contentType: 'text/plain', data: PNG_BYTES });
  const created = async (parts: Part[], token?: string | null) => {
    const res = await upload(parts, token);
    expect(res.status, res.text).to.equal(201);
    return res.body as any;
  };
  const liveRows = async () => (await db.query(`select count(*)::int as n from files.files`)).rows[0].n as number;
  const storedFiles = async () => {
    const dir = stack.services.files!.ctx.config as unknown as { FILES_LOCAL_DIR: string };
    const walk = async (d: string): Promise<string[]> =>
      (await readdir(d, { withFileTypes: true }).catch(() => [])).flatMap((e) => [`${d}/${e.name}`]).length === 0
        ? []
        : (
            await Promise.all(
              (await readdir(d, { withFileTypes: true })).map((e) => (e.isDirectory() ? walk(`${d}/${e.name}`) : [`${d}/${e.name}`])),
            )
          ).flat();
    return walk(dir.FILES_LOCAL_DIR);
  };

  before(async () => {
    stack = await startStack({ files: { FILES_MAX_BYTES: String(LIMIT) } });
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    db = new pg.Client({ connectionString: stack.db.url });
    await db.connect();
    t = await seedTenant(call, stack.adminToken);
    other = await seedTenant(call, stack.adminToken);
    leads = salesRoutes(call, 'leads', () => t);
    deals = salesRoutes(call, 'deals', () => t);
    lead = await leads.created({ title: 'With files' });
    deal = await deals.created({ title: 'Deal with files' });
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  describe('POST /files', () => {
    it('stores a file of a lead: 201, the type sniffed from the bytes, the name sanitized, a batch of one', async () => {
      const f = await created([{ name: 'crm_lead_id', value: lead.id }, png('../../etc/pass<wd>.png')]);
      expect(f).to.include({
        file_name: 'pass_wd_.png',
        mime_type: 'image/png',
        file_size: PNG_BYTES.length,
        crm_lead_id: lead.id,
        crm_deal_id: null,
      });
      expect(f.batch).to.deep.equal({ id: f.batch.id, files_count: 1, total_size: PNG_BYTES.length });
      expect(f.created_by).to.deep.equal({ id: t.user.id });
      expect(Date.parse(f.url_expires_at) - Date.now()).to.be.within(23.9 * 3600e3, 24 * 3600e3);
      const download = await fetch(f.url);
      expect(download.status).to.equal(200);
      expect(download.headers.get('content-type')).to.equal('image/png');
      expect(download.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(download.headers.get('content-disposition')).to.contain('pass_wd_.png');
      expect(Buffer.from(await download.arrayBuffer()).equals(PNG_BYTES)).to.equal(true);
    });

    it('sniffs a PDF sent as image/jpeg, text as text/plain and unknown bytes as application/octet-stream', async () => {
      const pdf = await created([
        { name: 'crm_lead_id', value: lead.id },
        { name: 'file', filename: 'a.jpg', contentType: 'image/jpeg', data: PDF_BYTES },
      ]);
      expect(pdf.mime_type).to.equal('application/pdf');
      const text = await created([
        { name: 'crm_lead_id', value: lead.id },
        { name: 'file', filename: 'n.txt', data: Buffer.from('olá, mundo\n') },
      ]);
      expect(text.mime_type).to.equal('text/plain');
      const bin = await created([
        { name: 'crm_lead_id', value: lead.id },
        { name: 'file', filename: 'x.bin', contentType: 'image/png', data: Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 7]) },
      ]);
      expect(bin.mime_type).to.equal('application/octet-stream');
      for (const f of [pdf, text, bin])
        expect((await call('DELETE', `/integrations/external/files/${f.id}`, { token: t.key.key })).status).to.equal(200);
    });

    it('stores a file of a deal, and an upload naming a batch joins it and adds to its totals', async () => {
      const first = await created([{ name: 'crm_deal_id', value: deal.id }, png('one.png')]);
      const second = await created([{ name: 'crm_deal_id', value: deal.id }, { name: 'batch_id', value: first.batch.id }, png('two.png')]);
      expect(second.crm_deal_id).to.equal(deal.id);
      expect(second.batch).to.deep.equal({ id: first.batch.id, files_count: 2, total_size: 2 * PNG_BYTES.length });
    });

    it('takes a file of exactly the limit, and ends a larger one with 413 while it streams, storing nothing', async () => {
      const exact = await created([
        { name: 'crm_lead_id', value: lead.id },
        { name: 'file', filename: 'big.bin', data: generated(LIMIT) },
      ]);
      expect(exact.file_size).to.equal(LIMIT);
      const [rows, files] = [await liveRows(), (await storedFiles()).length];
      const res = await upload([
        { name: 'crm_lead_id', value: lead.id },
        { name: 'file', filename: 'bigger.bin', data: generated(3 * LIMIT) },
      ]);
      expect(res.status, res.text).to.equal(413);
      expect(res.body).to.deep.equal({
        statusCode: 413,
        message: `file: larger than the limit of ${LIMIT} bytes`,
        error: 'Payload Too Large',
      });
      expect(await liveRows()).to.equal(rows);
      expect((await storedFiles()).length).to.equal(files);
      expect((await storedFiles()).some((p) => p.endsWith('.partial'))).to.equal(false);
    });

    describe('validation: 400 naming the field, nothing written or stored', () => {
      let before: { rows: number; files: number };
      beforeEach(async () => {
        before = { rows: await liveRows(), files: (await storedFiles()).length };
      });
      afterEach(async () => {
        expect(await liveRows()).to.equal(before.rows);
        expect((await storedFiles()).length).to.equal(before.files);
      });
      it('neither crm_lead_id nor crm_deal_id', async () => expect400(await upload([png()]), 'crm_lead_id'));
      it('both crm_lead_id and crm_deal_id', async () =>
        expect400(await upload([{ name: 'crm_lead_id', value: lead.id }, { name: 'crm_deal_id', value: deal.id }, png()]), 'crm_lead_id'));
      it('a crm_lead_id that is not a UUID', async () =>
        expect400(await upload([{ name: 'crm_lead_id', value: 'x' }, png()]), 'crm_lead_id'));
      it('no file part', async () => expect400(await upload([{ name: 'crm_lead_id', value: lead.id }]), 'file'));
      it("the form's own refusals list their field in details.fields, as every validation 400 does", async () => {
        for (const [parts, field] of [
          [[{ name: 'crm_lead_id', value: lead.id }], 'file'],
          [[png(), { name: 'crm_lead_id', value: lead.id }], 'crm_lead_id'],
          [
            [
              { name: 'crm_lead_id', value: lead.id },
              { name: 'document', filename: 'a.png', data: PNG_BYTES },
            ],
            'document',
          ],
          [[{ name: 'crm_lead_id', value: lead.id }, { name: 'note', value: 'x'.repeat(5000) }, png()], 'note'],
        ] as [Part[], string][]) {
          const res = await upload(parts);
          expect400(res, field);
          expect(
            res.body.details.fields.map((f: { field: string }) => f.field),
            res.text,
          ).to.deep.equal([field]);
        }
      });
      it('two files', async () => expect400(await upload([{ name: 'crm_lead_id', value: lead.id }, png('a.png'), png('b.png')]), 'file'));
      it('a field after the file', async () => expect400(await upload([png(), { name: 'crm_lead_id', value: lead.id }]), 'crm_lead_id'));
      it('a file part with another name', async () =>
        expect400(
          await upload([
            { name: 'crm_lead_id', value: lead.id },
            { name: 'document', filename: 'a.png', data: PNG_BYTES },
          ]),
          'document',
        ));
      it('a batch_id of no batch', async () =>
        expect400(
          await upload([{ name: 'crm_lead_id', value: lead.id }, { name: 'batch_id', value: crypto.randomUUID() }, png()]),
          'batch_id',
        ));
      it('a JSON body', async () =>
        expect400(await call('POST', '/integrations/external/files', { token: t.key.key, body: { crm_lead_id: lead.id } }), 'body'));

      // The text rule of JSON bodies for the form's text (decisions 0110, 0135): the 400 names the field, nothing is stored.
      const textRefused = (res: Awaited<ReturnType<typeof upload>>, field: string, rule: string) => {
        expect400(res, field);
        expect(res.body.message).to.equal(`${field}: ${rule}`);
      };
      const named = (filename: string | Buffer, filenameStar?: string): Part => ({ name: 'file', filename, filenameStar, data: PNG_BYTES });
      it('a file name with a NUL (filename*)', async () =>
        textRefused(
          await upload([{ name: 'crm_lead_id', value: lead.id }, named('a.png', "UTF-8''a%00b.png")]),
          'file.filename',
          'must not contain NUL characters or unpaired UTF-16 surrogates',
        ));
      it('a file name with control characters (a tab, an escape, a C1 control)', async () => {
        for (const [filename, star] of [['a\tb.png'], ['x.png', "UTF-8''a%1Bb.png"], ['x.png', "UTF-8''a%C2%85b.png"]] as const)
          textRefused(
            await upload([{ name: 'crm_lead_id', value: lead.id }, named(filename, star)]),
            'file.filename',
            'must not contain control characters',
          );
      });
      it('a file name with raw control bytes in the quoted name: refused, not dropped as a malformed part (issue 23 item 4)', async () => {
        for (const byte of [0x01, 0x0a, 0x1b, 0x7f])
          textRefused(
            await upload([{ name: 'crm_lead_id', value: lead.id }, named(Buffer.from([0x61, byte, 0x2e, 0x70, 0x6e, 0x67]))]),
            'file.filename',
            'must not contain control characters',
          );
      });
      it('multipart without a boundary', async () => {
        const res = await fetch(`${stack.gatewayUrl}/integrations/external/files`, {
          method: 'POST',
          headers: { authorization: `Bearer ${t.key.key}`, 'content-type': 'multipart/form-data' },
          body: '--x\r\ncontent-disposition: form-data; name="crm_lead_id"\r\n\r\nx\r\n--x--\r\n',
        });
        expect(res.status).to.equal(400);
        expect(await res.json()).to.deep.equal({
          statusCode: 400,
          message: 'body: must be multipart/form-data with a boundary',
          error: 'Bad Request',
          details: { fields: [{ field: 'body', message: 'must be multipart/form-data with a boundary' }] },
        });
      });
      it('a file name that is not UTF-8 (raw bytes, or percent-encoded in filename*)', async () => {
        textRefused(
          await upload([{ name: 'crm_lead_id', value: lead.id }, named(Buffer.from([0x72, 0xe9, 0x73, 0x2e, 0x70, 0x6e, 0x67]))]),
          'file.filename',
          'must be UTF-8',
        );
        textRefused(
          await upload([{ name: 'crm_lead_id', value: lead.id }, named('x.png', "UTF-8''r%E9s.png")]),
          'file.filename',
          'must be UTF-8',
        );
      });
      it('a field with a NUL, a control character, or bytes that are not UTF-8', async () => {
        textRefused(
          await upload([{ name: 'crm_lead_id', value: `${lead.id}\u0000` }, png()]),
          'crm_lead_id',
          'must not contain NUL characters or unpaired UTF-16 surrogates',
        );
        textRefused(
          await upload([{ name: 'crm_lead_id', value: `${lead.id}\n` }, png()]),
          'crm_lead_id',
          'must not contain control characters',
        );
        textRefused(
          await upload([{ name: 'crm_lead_id', value: lead.id }, { name: 'batch_id', value: Buffer.from([0xc3, 0x28]) }, png()]),
          'batch_id',
          'must be UTF-8',
        );
      });
      it('a field the upload does not read, with a NUL', async () =>
        textRefused(
          await upload([{ name: 'crm_lead_id', value: lead.id }, { name: 'note', value: 'a\u0000b' }, png()]),
          'note',
          'must not contain NUL characters or unpaired UTF-16 surrogates',
        ));
    });

    it('keeps a UTF-8 file name, also one sent as filename*, as it was sent', async () => {
      const plain = await created([
        { name: 'crm_lead_id', value: lead.id },
        { name: 'file', filename: 'relatório – ação.png', data: PNG_BYTES },
      ]);
      expect(plain.file_name).to.equal('relatório – ação.png');
      const star = await created([
        { name: 'crm_lead_id', value: lead.id },
        { name: 'file', filename: 'x.png', filenameStar: "UTF-8''%E6%97%A5%E6%9C%AC.png", data: PNG_BYTES },
      ]);
      expect(star.file_name).to.equal('日本.png');
    });

    it('401 without a key, 403 with a key lacking crm/files.write', async () => {
      expect((await upload([{ name: 'crm_lead_id', value: lead.id }, png()], null)).status).to.equal(401);
      const key = await admin('POST', `/companies/${t.company.id}/keys`, {
        created_by_user_id: t.user.id,
        permissions: ['crm/files.read'],
      });
      const res = await upload([{ name: 'crm_lead_id', value: lead.id }, png()], key.body.key);
      expect(res.status, res.text).to.equal(403);
      expect(res.body.message).to.contain('crm/files.write');
    });

    it("404 for another company's lead or deal, and for a private lead hidden from the key creator", async () => {
      const foreignLead = await leads.created({ title: 'Foreign' }, { tenant: other });
      expect((await upload([{ name: 'crm_lead_id', value: foreignLead.id }, png()])).status).to.equal(404);
      const foreignDeal = await deals.created({ title: 'Foreign' }, { tenant: other });
      expect((await upload([{ name: 'crm_deal_id', value: foreignDeal.id }, png()])).status).to.equal(404);
      const colleague = await admin('POST', `/companies/${t.company.id}/users`, {
        name: 'Colleague',
        email: `c-${Date.now()}@example.test`,
      });
      const colleagueKey = await admin('POST', `/companies/${t.company.id}/keys`, {
        created_by_user_id: colleague.body.id,
        permissions: ['*'],
      });
      const hidden = await leads.created({ title: 'Private to colleague' }, { token: colleagueKey.body.key });
      const res = await upload([{ name: 'crm_lead_id', value: hidden.id }, png()]);
      expect(res.status, res.text).to.equal(404);
      expect(res.body).to.deep.equal({ statusCode: 404, message: 'Lead not found', error: 'Not Found' });
      const theirs = await created([{ name: 'crm_lead_id', value: hidden.id }, png()], colleagueKey.body.key);
      expect((await call('GET', `/integrations/external/files/${theirs.id}`, { token: t.key.key })).status).to.equal(404);
      expect((await call('DELETE', `/integrations/external/files/${theirs.id}`, { token: t.key.key })).status).to.equal(404);
      expect((await call('GET', `/integrations/external/files?crm_lead_id=${hidden.id}`, { token: t.key.key })).status).to.equal(404);
      expect((await call('GET', `/integrations/external/files/${theirs.id}`, { token: colleagueKey.body.key })).status).to.equal(200);
    });
  });

  describe('GET /files/{id}, GET /files, DELETE /files/{id}', () => {
    let listed: { id: string };
    let file: any;
    before(async () => {
      listed = await leads.created({ title: 'Listed' });
      for (const name of ['a.png', 'b.png', 'c.png']) file = await created([{ name: 'crm_lead_id', value: listed.id }, png(name)]);
    });

    it('looks a file up by id (200), 404 for another company, a removed file or an id that is no UUID', async () => {
      const res = await call('GET', `/integrations/external/files/${file.id}`, { token: t.key.key });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ id: file.id, file_name: 'c.png', mime_type: 'image/png', crm_lead_id: listed.id });
      expect((await call('GET', `/integrations/external/files/${file.id}`, { token: other.key.key })).status).to.equal(404);
      expect((await call('GET', '/integrations/external/files/nope', { token: t.key.key })).status).to.equal(404);
      expect((await call('GET', `/integrations/external/files/${file.id}`)).status).to.equal(401);
      const noRead = await admin('POST', `/companies/${t.company.id}/keys`, {
        created_by_user_id: t.user.id,
        permissions: ['crm/files.write'],
      });
      expect((await call('GET', `/integrations/external/files/${file.id}`, { token: noRead.body.key })).status).to.equal(403);
    });

    it('lists the files of a lead newest first, with skip, take and a cursor', async () => {
      const all = await call('GET', `/integrations/external/files?crm_lead_id=${listed.id}`, { token: t.key.key });
      expect(all.status, all.text).to.equal(200);
      expect(all.body.total).to.equal(3);
      expect(all.body.records.map((f: any) => f.file_name)).to.deep.equal(['c.png', 'b.png', 'a.png']);
      expect(all.body.next_cursor).to.equal(null);
      const page1 = await call('GET', `/integrations/external/files?crm_lead_id=${listed.id}&take=2`, { token: t.key.key });
      expect(page1.body.records.map((f: any) => f.file_name)).to.deep.equal(['c.png', 'b.png']);
      const page2 = await call('GET', `/integrations/external/files?crm_lead_id=${listed.id}&take=2&cursor=${page1.body.next_cursor}`, {
        token: t.key.key,
      });
      expect(page2.body.records.map((f: any) => f.file_name)).to.deep.equal(['a.png']);
      const skipped = await call('GET', `/integrations/external/files?crm_lead_id=${listed.id}&skip=2`, { token: t.key.key });
      expect(skipped.body.records.map((f: any) => f.file_name)).to.deep.equal(['a.png']);
      expect400(await call('GET', `/integrations/external/files?crm_lead_id=${listed.id}&take=101`, { token: t.key.key }), 'take');
      expect400(await call('GET', '/integrations/external/files', { token: t.key.key }), 'crm_lead_id');
      expect400(await call('GET', `/integrations/external/files?crm_lead_id=${listed.id}&cursor=zz`, { token: t.key.key }), 'cursor');
      expect((await call('GET', `/integrations/external/files?crm_lead_id=${listed.id}`, { token: other.key.key })).status).to.equal(404);
      const deals = await call('GET', `/integrations/external/files?crm_deal_id=${deal.id}`, { token: t.key.key });
      expect(deals.body.total).to.equal(2);
    });

    it('removes a file logically: {success: true}, the batch totals adjusted, gone from lookup and list, the row kept', async () => {
      const first = await created([{ name: 'crm_lead_id', value: listed.id }, png('x.png')]);
      const second = await created([{ name: 'crm_lead_id', value: listed.id }, { name: 'batch_id', value: first.batch.id }, png('y.png')]);
      expect((await call('DELETE', `/integrations/external/files/${second.id}`, { token: other.key.key })).status).to.equal(404);
      const res = await call('DELETE', `/integrations/external/files/${second.id}`, { token: t.key.key });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true });
      const left = await call('GET', `/integrations/external/files/${first.id}`, { token: t.key.key });
      expect(left.body.batch).to.deep.equal({ id: first.batch.id, files_count: 1, total_size: PNG_BYTES.length });
      expect((await call('GET', `/integrations/external/files/${second.id}`, { token: t.key.key })).status).to.equal(404);
      expect((await call('DELETE', `/integrations/external/files/${second.id}`, { token: t.key.key })).status).to.equal(404);
      expect((await fetch(second.url)).status).to.equal(404);
      const row = (await db.query(`select deleted_at, deleted_by_id from files.files where id = $1`, [second.id])).rows[0];
      expect(row.deleted_at).to.be.instanceOf(Date);
      expect(row.deleted_by_id).to.equal(t.user.id);
      expect((await call('DELETE', `/integrations/external/files/${first.id}`)).status).to.equal(401);
    });

    it('purges the bytes of a file removed longer than the retention ago; the row stays, lookups and its URL stay 404', async () => {
      const kept = await created([{ name: 'crm_lead_id', value: listed.id }, png('kept.png')]);
      const gone = await created([{ name: 'crm_lead_id', value: listed.id }, png('gone.png')]);
      expect((await call('DELETE', `/integrations/external/files/${gone.id}`, { token: t.key.key })).status).to.equal(200);
      const keyOf = async (id: string) => (await db.query('select storage_key from files.files where id = $1', [id])).rows[0].storage_key;
      const has = async (id: string) => {
        const key = (await keyOf(id)) as string;
        return (await storedFiles()).some((p) => p.endsWith(`/${key}`));
      };
      expect(await has(gone.id)).to.equal(true);
      // Removed 31 days ago: past the default retention of 30 days.
      await db.query(`update files.files set deleted_at = now() - interval '31 days' where id = $1`, [gone.id]);
      const { purger } = stack.services.files!.deps as { purger: { purge(): Promise<number> } };
      expect(await purger.purge()).to.be.at.least(1);
      expect(await has(gone.id)).to.equal(false);
      expect(await has(kept.id)).to.equal(true);
      const row = (await db.query('select deleted_at, purged_at from files.files where id = $1', [gone.id])).rows[0];
      expect(row.deleted_at).to.be.instanceOf(Date);
      expect(row.purged_at).to.be.instanceOf(Date);
      const lookup = await call('GET', `/integrations/external/files/${gone.id}`, { token: t.key.key });
      expect(lookup.status).to.equal(404);
      expect(lookup.body).to.deep.equal({ statusCode: 404, message: 'File not found', error: 'Not Found' });
      expect((await fetch(gone.url)).status).to.equal(404);
      expect((await fetch(kept.url)).status).to.equal(200);
    });
  });

  describe('signed downloads', () => {
    it('refuse a forged signature, another file id and an expired URL with 404', async () => {
      const f = await created([{ name: 'crm_lead_id', value: lead.id }, png()]);
      const url = new URL(f.url);
      const forged = new URL(url);
      forged.searchParams.set('signature', `${url.searchParams.get('signature')!.slice(0, -2)}AA`);
      expect((await fetch(forged)).status).to.equal(404);
      const expired = new URL(url);
      expired.searchParams.set('expires', String(Math.floor(Date.now() / 1000) - 1));
      expect((await fetch(expired)).status).to.equal(404);
      const moved = new URL(url.toString().replace(f.id, crypto.randomUUID()));
      expect((await fetch(moved)).status).to.equal(404);
      const bare = new URL(url);
      bare.search = '';
      expect((await fetch(bare)).status).to.equal(404);
    });
  });

  describe('associations_count.files of the lead and deal details', () => {
    it('counts the live files of a lead, also in a detail read (and cached) before the change', async () => {
      const counted = await leads.created({ title: 'Counted' });
      expect((await leads.detail(counted.id)).associations_count.files).to.equal(0);
      const a = await created([{ name: 'crm_lead_id', value: counted.id }, png('a.png')]);
      expect((await leads.detail(counted.id)).associations_count.files).to.equal(1);
      await created([{ name: 'crm_lead_id', value: counted.id }, png('b.png')]);
      expect((await leads.detail(counted.id)).associations_count.files).to.equal(2);
      await call('DELETE', `/integrations/external/files/${a.id}`, { token: t.key.key });
      expect((await leads.detail(counted.id)).associations_count.files).to.equal(1);
    });

    it('counts uploads made at once exactly (each count is taken under the record lock)', async () => {
      const counted = await leads.created({ title: 'Concurrent uploads' });
      await Promise.all(Array.from({ length: 6 }, (_, i) => created([{ name: 'crm_lead_id', value: counted.id }, png(`c${i}.png`)])));
      expect((await leads.detail(counted.id)).associations_count.files).to.equal(6);
      const versions = await db.query(`select files_count from crm.record_file_counts where record_id = $1`, [counted.id]);
      expect(versions.rows).to.deep.equal([{ files_count: 6 }]);
    });

    it('counts the live files of a deal', async () => {
      const counted = await deals.created({ title: 'Counted deal' });
      await created([{ name: 'crm_deal_id', value: counted.id }, png()]);
      expect((await deals.detail(counted.id)).associations_count.files).to.equal(1);
    });
  });
});
