/**
 * The README and docs/ are read in a clone of the repository (decision 0218): every relative link must reach a file
 * of the repository, and every `#fragment` a heading of its page. Links and headings are read as GitHub renders
 * them (marked's lexer, github-slugger), so a link inside a code block is not a link and anchors match GitHub's.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import GithubSlugger from 'github-slugger';
import { lexer, type Token, walkTokens } from 'marked';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const pages = [join(root, 'README.md'), ...markdownUnder(join(root, 'docs'))];
const name = (path: string) => relative(root, path);

/** The text a heading renders to, without its markup: what GitHub makes its anchor from. */
function plainText(tokens: Token[]): string {
  return tokens.map((t) => ('tokens' in t && t.tokens ? plainText(t.tokens) : 'text' in t ? t.text : '')).join('');
}

const anchorsCache = new Map<string, Set<string>>();
function anchorsOf(path: string): Set<string> {
  let anchors = anchorsCache.get(path);
  if (!anchors) {
    const slugger = new GithubSlugger();
    anchors = new Set();
    walkTokens(lexer(readFileSync(path, 'utf8')), (t) => {
      if (t.type === 'heading') anchors!.add(slugger.slug(plainText(t.tokens ?? [])));
    });
    anchorsCache.set(path, anchors);
  }
  return anchors;
}

function linksOf(path: string): string[] {
  const hrefs: string[] = [];
  walkTokens(lexer(readFileSync(path, 'utf8')), (t) => {
    if (t.type === 'link' || t.type === 'image') hrefs.push(t.href);
  });
  return hrefs;
}

/** What is wrong with one link of a page, or undefined when it resolves inside the repository. */
function problemOf(page: string, href: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return /^(https?|mailto):/i.test(href) ? undefined : 'an unknown scheme';
  if (href.startsWith('/')) return 'an absolute path';
  const [pathPart = '', fragment] = href.split('#', 2);
  const target = pathPart ? resolve(dirname(page), decodeURIComponent(pathPart)) : page;
  const inside = relative(root, target);
  if (inside === '..' || inside.startsWith(`..${sep}`)) return 'a path outside the repository';
  if (!existsSync(target)) return 'a missing file';
  if (fragment && target.endsWith('.md') && statSync(target).isFile() && !anchorsOf(target).has(fragment))
    return `no heading #${fragment} in ${name(target)}`;
  return undefined;
}

describe('docs: links of the README and docs/', () => {
  it('reads every page and finds its links', () => {
    expect(pages.length).to.be.greaterThan(10);
    expect(linksOf(join(root, 'README.md'))).to.include('docs/architecture.md');
  });

  it('resolves every relative link to a file of the repository, and every fragment to a heading', () => {
    const broken = pages.flatMap((page) =>
      linksOf(page).flatMap((href) => {
        const problem = problemOf(page, href);
        return problem ? [`${name(page)}: ${href} (${problem})`] : [];
      }),
    );
    expect(broken, broken.join('\n')).to.deep.equal([]);
  });

  it('refuses a link that leaves the repository, a missing file and a missing heading', () => {
    const readme = join(root, 'README.md');
    expect(problemOf(readme, '../shared/spec/integration-api.md')).to.equal('a path outside the repository');
    expect(problemOf(readme, 'docs/nowhere.md')).to.equal('a missing file');
    expect(problemOf(readme, 'docs/webhooks.md#nowhere')).to.match(/^no heading/);
    expect(problemOf(readme, '/etc/hosts')).to.equal('an absolute path');
    expect(problemOf(readme, 'docs/webhooks.md#destinations')).to.equal(undefined);
  });

  it('keeps the README a short guide: two quick-start commands, lines under 200 characters', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const quickStart = /## Quick start\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(quickStart).to.equal('npm install && npm start\nnpm test\n');
    const long = readme.split('\n').filter((line) => line.length >= 200);
    expect(long, long.join('\n')).to.deep.equal([]);
  });
});
