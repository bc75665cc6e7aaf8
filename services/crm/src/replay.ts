import { replayMain } from '@svc/platform/events/replay';
import { crmService } from './service.js';

// Operators: `npm run events:replay -- --service crm --company <uuid> --since <ISO time> [--until <ISO time>]`.
await replayMain(crmService);
