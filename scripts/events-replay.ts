/**
 * `npm run events:replay -- --service <name> --company <uuid> --since <ISO time> [--until <ISO time>]`:
 * runs that service's replay entry (`services/<name>/src/replay.ts`), which publishes the company's
 * outbox events of the range to JetStream again. See docs/operations/replaying-events.md.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const SERVICES = ['crm', 'tasks', 'chat', 'files', 'webhooks'] as const;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const argv = process.argv.slice(2);
const at = argv.findIndex((a) => a === '--service' || a.startsWith('--service='));
const service = at < 0 ? undefined : argv[at]!.includes('=') ? argv[at]!.slice('--service='.length) : argv[at + 1];
if (!service || !(SERVICES as readonly string[]).includes(service)) {
  console.error(
    `events:replay: --service must be one of ${SERVICES.join(', ')}\n` +
      'usage: npm run events:replay -- --service <name> --company <uuid> --since <ISO time> [--until <ISO time>]',
  );
  process.exit(2);
}
// The entry reads the same command line (and checks that --service names it).
await import(pathToFileURL(path.join(root, 'services', service, 'src', 'replay.ts')).href);
