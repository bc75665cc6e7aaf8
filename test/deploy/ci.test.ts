/**
 * What .ci/run relies on: the counting reporter names every skipped test, the summary fails CI on a skip, and turbo
 * hands the test tasks the certificate, proxy and npm settings they need to fetch helm (turbo's strict environment
 * mode strips every variable not listed, which is how the Helm suite came to skip in every CI run).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const { summarize } = createRequire(import.meta.url)('../support/ci-results.cjs') as {
  summarize(text: string, status?: number): { ok: boolean; lines: string[] };
};

describe('CI: skipped suites and the environment of test tasks', () => {
  it('the counting reporter records the full title of each skipped test, and of each failed one with its error', function () {
    this.timeout(30_000);
    const dir = mkdtempSync(join(tmpdir(), 'ci-reporter-'));
    try {
      writeFileSync(
        join(dir, 'spec.cjs'),
        `describe('Suite', () => {
           describe('needs a tool', () => { before(function () { this.skip(); }); it('a', () => {}); it('b', () => {}); });
           it('runs', () => {});
           it('breaks', () => { throw new Error('expected 200 to equal 201\\nsecond line'); });
         });`,
      );
      const results = join(dir, 'results.jsonl');
      const mocha = join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js');
      const r = spawnSync(
        process.execPath,
        [mocha, '--no-config', '--reporter', join(here, '..', 'support', 'counting-reporter.cjs'), join(dir, 'spec.cjs')],
        {
          cwd: dir,
          encoding: 'utf8',
          env: { ...process.env, TEST_RESULTS_FILE: results },
        },
      );
      expect(r.status, r.stderr).to.equal(1);
      const line = JSON.parse(readFileSync(results, 'utf8').trim());
      expect(line).to.deep.include({ passed: 1, failed: 1, skipped: 2 });
      expect(line.skippedTitles).to.deep.equal(['Suite needs a tool a', 'Suite needs a tool b']);
      expect(line.failedTitles).to.deep.equal(['Suite breaks: expected 200 to equal 201']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the summary fails on a skipped test, names it, and counts it as failed on the line CI reads', () => {
    const run = (o: object) => JSON.stringify({ cwd: '/w/test', passed: 3, failed: 0, skipped: 0, ...o });
    const clean = summarize(`${run({})}\n${run({ passed: 2 })}\n`);
    expect(clean).to.deep.equal({ ok: true, lines: ['mocha runs: 2', '5 passed, 0 failed'] });
    const skipped = summarize(`${run({})}\n${run({ skipped: 1, skippedTitles: ['deploy: Helm charts lints'] })}\n`);
    expect(skipped.ok).to.equal(false);
    expect(skipped.lines).to.include('skipped: /w/test: deploy: Helm charts lints');
    expect(skipped.lines.at(-1)).to.equal('6 passed, 1 failed');
    const failed = summarize(`${run({ failed: 1, failedTitles: ['chat: sends: expected 200 to equal 201'] })}\n`);
    expect(failed.ok).to.equal(false);
    expect(failed.lines).to.deep.equal(['failed: /w/test: chat: sends: expected 200 to equal 201', 'mocha runs: 1', '3 passed, 1 failed']);
  });

  it('the summary fails when a step failed without a failed test, and when no run reported', () => {
    expect(summarize(`${JSON.stringify({ cwd: '/w', passed: 1, failed: 0, skipped: 0 })}\n`, 1)).to.deep.equal({
      ok: false,
      lines: ['mocha runs: 1', '1 passed, 1 failed'],
    });
    expect(summarize('').ok).to.equal(false);
  });

  it('turbo passes the CA certificates, proxies and npm settings through to the test tasks', function () {
    this.timeout(60_000);
    const turbo = join(repoRoot, 'node_modules', '.bin', 'turbo');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TURBO_TELEMETRY_DISABLED: '1',
      NODE_EXTRA_CA_CERTS: '/etc/ssl/extra.pem',
      SSL_CERT_FILE: '/etc/ssl/cert.pem',
      HTTPS_PROXY: 'http://127.0.0.1:3128',
      npm_config_registry: 'https://registry.example.test/',
    };
    const r = spawnSync(turbo, ['run', 'test', '--filter=@svc/e2e', '--dry=json'], { cwd: repoRoot, encoding: 'utf8', env });
    expect(r.status, r.stderr).to.equal(0);
    const dry = JSON.parse(r.stdout) as { globalCacheInputs: { environmentVariables: { passthrough: string[] | null } } };
    const names = (dry.globalCacheInputs.environmentVariables.passthrough ?? []).map((v) => v.split('=')[0]);
    expect(names).to.include.members(['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'HTTPS_PROXY', 'npm_config_registry']);
  });
  it('runs the two-replica topology suite after the reliability suite, with HAProxy installed when missing', () => {
    const script = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
    const at = (line: string) => script.indexOf(line);
    expect(at('npm run test:topology || status=1')).to.be.above(at('npm run test:reliability || status=1'));
    expect(at('npm run test:topology || status=1')).to.be.below(at('node test/support/ci-results.cjs'));
    expect(script).to.match(/missing\+=\(haproxy\)/);
    expect(script).to.match(/apt-get install -y -qq "\$\{missing\[@\]\}"/);
    const config = JSON.parse(readFileSync(join(here, '..', '.mocharc.topology.json'), 'utf8'));
    expect(config).to.deep.include({ spec: ['topology/**/*.test.ts'], reporter: 'support/counting-reporter.cjs' });
    const root = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    expect(root.scripts['test:topology']).to.equal('npm run test:topology -w test');
  });
});
