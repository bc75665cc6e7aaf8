// Mocha's spec reporter plus one closing line `N passed, N failed, N skipped`, which CI reads.
// When TEST_RESULTS_FILE is set, the counts are also appended to it (one JSON line per mocha run),
// so .ci/run can add up the runs of every workspace; the titles of skipped tests go with them, because CI
// fails when any test was skipped (a suite that skips in CI, like the Helm suite without its binary, tests nothing).
// The titles of failed tests go with them too, with the first line of each error, so the end of CI's output (which may
// be all that is kept of it) names what failed.
const fs = require('node:fs');
const Mocha = require('mocha');

const { EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;

class CountingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedTitles = [];
    const failedTitles = [];
    runner.on(EVENT_TEST_PASS, () => passed++);
    runner.on(EVENT_TEST_FAIL, (test, err) => {
      failed++;
      const first = String(err?.message ?? err ?? '')
        .split('\n')[0]
        .slice(0, 300);
      failedTitles.push(`${test.fullTitle()}: ${first}`);
    });
    runner.on(EVENT_TEST_PENDING, (test) => {
      skipped++;
      skippedTitles.push(test.fullTitle());
    });
    runner.once(EVENT_RUN_END, () => {
      console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
      if (process.env.TEST_RESULTS_FILE) {
        fs.appendFileSync(
          process.env.TEST_RESULTS_FILE,
          `${JSON.stringify({ cwd: process.cwd(), passed, failed, skipped, skippedTitles, failedTitles })}\n`,
        );
      }
    });
  }
}

module.exports = CountingReporter;
