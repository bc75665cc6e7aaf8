/**
 * docs/decisions/README.md is the index of the decisions: every note is listed once, under its own number and
 * title, and every row links a note that exists (the index had fallen 14 notes behind before this test).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const dir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'decisions');

describe('docs: the index of decisions', () => {
  const notes = readdirSync(dir).filter((f) => /^\d{4}-.*\.md$/.test(f));
  const rows = [...readFileSync(join(dir, 'README.md'), 'utf8').matchAll(/^\| (\d{4}) \| \[(.+?)\]\(([^)]+)\)/gm)].map((m) => ({
    number: m[1]!,
    title: m[2]!,
    file: m[3]!,
  }));

  it('lists every note once, and links only notes that exist', () => {
    expect(rows.map((r) => r.file)).to.have.members(notes);
    expect(new Set(rows.map((r) => r.number)).size).to.equal(rows.length);
  });

  it('gives each note its number and the title of its heading', () => {
    for (const r of rows) {
      const heading = readFileSync(join(dir, r.file), 'utf8').split('\n')[0]!;
      expect(r.file.slice(0, 4), r.file).to.equal(r.number);
      expect(heading, r.file).to.equal(`# ${r.number} ${r.title}`);
    }
  });
});
