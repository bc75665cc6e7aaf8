import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedExamples } from '@svc/platform/http/openapi-document';
import recordedBefore from '../../services/platform/src/http/openapi-examples.json' with { type: 'json' };
import type { ContractValidator } from './contract.js';
import { REPO_ROOT } from './processes.js';

export const EXAMPLES_FILE = join(REPO_ROOT, 'services/platform/src/http/openapi-examples.json');
export const committedExamples = recordedBefore as RecordedExamples;

/** At most this many items of any array in an example: a page of 100 records shows the shape as well as two do. */
const EXAMPLE_ITEMS = 2;

/** `value` with every array cut to its first items (the document, and the client's types that show it, stay small). */
export function shortened<T>(value: T): T {
  if (Array.isArray(value)) return value.slice(0, EXAMPLE_ITEMS).map(shortened) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortened(v)])) as T;
}

/**
 * The examples file after a run (decision 0187): an operation keeps its committed example while that still fits the
 * document, and takes this run's when it has none or its old one no longer fits; operations the document lost go.
 */
export function mergeExamples(validator: ContractValidator, run: RecordedExamples): RecordedExamples {
  const operations: RecordedExamples['operations'] = {};
  for (const key of validator.operationKeys().sort()) {
    const candidates = [committedExamples.operations[key], run.operations[key]].map((e) => e && shortened(e));
    const fit = candidates.find((example) => example && validator.exampleProblems(key, example).length === 0);
    if (fit) operations[key] = fit;
    else if (run.operations[key])
      console.warn(`not recorded: ${validator.exampleProblems(key, shortened(run.operations[key])).join('; ')}`);
    else console.warn(`not recorded: ${key}: no 2xx answer in this run`);
  }
  const webhooks: RecordedExamples['webhooks'] = {};
  for (const key of Object.keys(validator.doc.webhooks).sort()) {
    const fit = [committedExamples.webhooks[key], run.webhooks[key]]
      .map(shortened)
      .find((b) => b !== undefined && !validator.webhookProblems(key, b).length);
    if (fit !== undefined) webhooks[key] = fit;
  }
  return { operations, webhooks };
}

export function writeExamples(examples: RecordedExamples): void {
  writeFileSync(EXAMPLES_FILE, `${JSON.stringify(examples, null, 2)}\n`);
}
