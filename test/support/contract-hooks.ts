import { violations } from './contract.js';

/**
 * Mocha root hooks (loaded by .mocharc.json): a test during which a response or a webhook body broke the OpenAPI
 * document fails its `afterEach` hook (named after the test), listing each violation, even when the call's own error
 * was caught by a polling helper.
 */
export const mochaHooks = {
  afterEach() {
    if (!violations.length) return;
    const found = violations.splice(0);
    throw new Error(`Contract violations (decision 0101):\n${found.join('\n')}`);
  },
};
