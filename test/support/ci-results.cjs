// Sums the lines the counting reporter appended to TEST_RESULTS_FILE over every mocha run of CI (.ci/run) and
// ends with the line CI reads, `N passed, N failed`, after the title of each failed test. A skipped test counts as failed there, named on its own line:
// every suite must run in CI (the Helm suite skips where helm cannot be fetched, which must not pass unnoticed).
// `--status N`: the exit status of the steps; a failed step with no failed test (a process that crashed before its
// reporter ran) still counts one failure. Exits 1 when anything failed or was skipped.
const fs = require('node:fs');

function summarize(text, status = 0) {
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const sum = (k) => lines.reduce((n, l) => n + (l[k] ?? 0), 0);
  const skippedTitles = lines.flatMap((l) => (l.skippedTitles ?? []).map((t) => `${l.cwd}: ${t}`));
  const failedTitles = lines.flatMap((l) => (l.failedTitles ?? []).map((t) => `${l.cwd}: ${t}`));
  const skipped = sum('skipped');
  let failed = sum('failed') + skipped;
  if (status !== 0 && failed === 0) failed = 1;
  const out = [...failedTitles.map((t) => `failed: ${t}`), ...skippedTitles.map((t) => `skipped: ${t}`), `mocha runs: ${lines.length}`];
  if (skipped > 0) out.push(`${skipped} tests skipped, counted as failed: every suite must run in CI`);
  out.push(`${sum('passed')} passed, ${failed} failed`);
  return { ok: failed === 0 && lines.length > 0, lines: out };
}

if (require.main === module) {
  const at = process.argv.indexOf('--status');
  const r = summarize(fs.readFileSync(process.argv[2], 'utf8'), at > 0 ? Number(process.argv[at + 1]) : 0);
  console.log(r.lines.join('\n'));
  process.exit(r.ok ? 0 : 1);
}

module.exports = { summarize };
