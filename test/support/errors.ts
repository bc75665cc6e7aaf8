import { expect } from 'chai';

/**
 * The error body of every 4xx and 5xx: the spec's three fields, `statusCode` equal to the status, and, on every 400
 * (decisions 0141, 0163), a `details.fields` list of `{field, message}`; nothing else.
 */
export function expectErrorBody(res: { status: number; text: string; body: unknown }, what = ''): void {
  const say = `${what ? `${what}: ` : ''}${res.status} ${res.text.slice(0, 300)}`;
  expect(res.body, say).to.be.an('object');
  const body = res.body as Record<string, unknown>;
  if (res.status === 400) {
    expect(body, say).to.have.all.keys('statusCode', 'message', 'error', 'details');
    expect(body.details, say).to.have.all.keys('fields');
    const fields = (body.details as { fields: unknown }).fields;
    expect(fields, say).to.be.an('array').that.is.not.empty;
    for (const f of fields as unknown[]) {
      expect(f, say).to.have.all.keys('field', 'message');
      expect((f as { field: unknown }).field, say).to.be.a('string');
    }
  } else expect(body, say).to.have.all.keys('statusCode', 'message', 'error');
  expect(body.statusCode, say).to.equal(res.status);
  expect(body.message, say).to.be.a('string');
}
