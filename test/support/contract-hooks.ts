import { contractValidator, recorded, setCurrentTest, violations } from './contract.js';
import { mergeExamples, writeExamples } from './examples.js';

/**
 * Mocha root hooks (loaded by the mocharc files, decision 0101). A response that breaks the OpenAPI document already
 * fails its test at the call; a webhook body that breaks it arrives in a receiver's request handler, where nothing
 * can fail the test. So every violation is kept with the title of the test it happened in, and the run ends with one
 * failed "after all" hook listing them. Not in an afterEach: a failed root hook there would stop the whole run.
 */
export const mochaHooks = {
  beforeEach(this: Mocha.Context) {
    setCurrentTest(this.currentTest?.fullTitle() ?? '(unknown test)');
  },
  afterAll() {
    // `npm run examples -w test`: the run's answers become the document's examples (decision 0187).
    if (process.env.RECORD_OPENAPI_EXAMPLES) writeExamples(mergeExamples(contractValidator(), recorded));
    if (!violations.length) return;
    throw new Error(`Contract violations (decision 0101):\n${[...new Set(violations)].join('\n')}`);
  },
};
