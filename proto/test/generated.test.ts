import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { expect } from 'chai';

const root = resolve(import.meta.dirname, '..');
const buf = resolve(root, '../node_modules/.bin/buf');

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));

describe('proto: committed ts-proto output', () => {
  it('passes buf lint', () => {
    execFileSync(buf, ['lint'], { cwd: root, stdio: 'pipe' });
  });

  it('is exactly what buf generate produces from the .proto files (run `npm run proto:gen` when this fails)', function () {
    this.timeout(60_000);
    const out = mkdtempSync(join(tmpdir(), 'proto-gen-'));
    try {
      execFileSync(buf, ['generate', '--output', out], { cwd: root, stdio: 'pipe' });
      const fresh = files(join(out, 'gen'))
        .map((f) => relative(out, f))
        .sort();
      const committed = files(join(root, 'gen'))
        .map((f) => relative(root, f))
        .sort();
      expect(committed).to.deep.equal(fresh);
      for (const f of fresh) expect(readFileSync(join(root, f), 'utf8'), f).to.equal(readFileSync(join(out, f), 'utf8'));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
