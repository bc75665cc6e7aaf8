import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedExamples } from '@svc/platform/http/openapi-document';
import recordedBefore from '../../services/platform/src/http/openapi-examples.json' with { type: 'json' };
import type { ContractValidator } from './contract.js';
import { REPO_ROOT } from './processes.js';

export const EXAMPLES_FILE = join(REPO_ROOT, 'services/platform/src/http/openapi-examples.json');
export const committedExamples = recordedBefore as RecordedExamples;

/**
 * The examples file after a run (decision 0187): an operation keeps its committed example while that still fits the
 * document, and takes this run's when it has none or its old one no longer fits; operations the document lost go.
 */
export function mergeExamples(validator: ContractValidator, run: RecordedExamples): RecordedExamples {
  const operations: RecordedExamples['operations'] = {};
  for (const key of validator.operationKeys().sort()) {
    const candidates = [committedExamples.operations[key], run.operations[key]];
    const fit = candidates.find((example) => example && validator.exampleProblems(key, example).length === 0);
    if (fit) operations[key] = fit;
    else if (run.operations[key]) console.warn(`not recorded: ${validator.exampleProblems(key, run.operations[key]).join('; ')}`);
    else console.warn(`not recorded: ${key}: no 2xx answer in this run`);
  }
  const webhooks: RecordedExamples['webhooks'] = {};
  for (const key of Object.keys(validator.doc.webhooks).sort()) {
    const fit = [committedExamples.webhooks[key], run.webhooks[key]].find(
      (b) => b !== undefined && !validator.webhookProblems(key, b).length,
    );
    if (fit !== undefined) webhooks[key] = fit;
  }
  return { operations, webhooks };
}

export function writeExamples(examples: RecordedExamples): void {
  writeFileSync(EXAMPLES_FILE, `${JSON.stringify(examples, null, 2)}\n`);
}
