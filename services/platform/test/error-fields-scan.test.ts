import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'testing' ? [] : sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Every 400 names its field in `details.fields` (issue 23 item 14, decision 0163): no source of a service or the
 * gateway builds an `invalid` error without its field list, whatever the route.
 */
describe('every 400 is built with its fields (a scan of every service and the gateway)', () => {
  const files = [
    ...readdirSync(join(root, 'services')).flatMap((s) => sources(join(root, 'services', s, 'src'))),
    ...sources(join(root, 'gateway', 'src')),
  ].map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));
  const hits = (re: RegExp, except: string[] = []) =>
    files
      .filter((f) => !except.includes(f.path))
      .flatMap((f) => [...f.text.matchAll(re)].map((m) => `${f.path}:${f.text.slice(0, m.index).split('\n').length}: ${m[0]}`));

  it('scans the sources', () => {
    expect(files.length).to.be.greaterThan(100);
  });

  it('has no 400 without a field list: no bare invalid(message), AppError(invalid) or errorBody(invalid)', () => {
    expect(hits(/(?<![.\w])invalid\(/g)).to.deep.equal([]);
    expect(hits(/new AppError\(\s*'invalid'/g, ['services/platform/src/errors.ts'])).to.deep.equal([]);
    expect(hits(/errorBody\(\s*'invalid'/g)).to.deep.equal([]);
  });

  it('names a field, not a sentence, in every invalidField', () => {
    // The first argument: a string or template literal without spaces before its first `: `, or an expression.
    const calls = hits(/invalidField\(\s*(['`])((?:(?!\1).)*)\1/g);
    expect(calls.length).to.be.greaterThan(100);
    const bad = calls.filter((c) => {
      const field = /invalidField\(\s*['`](.*)['`]$/.exec(c)?.[1] ?? '';
      return field === '' || /:\s/.test(field.replace(/\$\{[^}]*\}/g, 'x')) || /^[A-Z]/.test(field);
    });
    expect(bad).to.deep.equal([]);
  });
});
