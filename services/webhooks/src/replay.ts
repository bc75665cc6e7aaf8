import { replayMain } from '@svc/platform/events/replay';
import { webhooksService } from './service.js';

// Operators: `npm run events:replay -- --service webhooks --company <uuid> --since <ISO time> [--until <ISO time>]`.
await replayMain(webhooksService);
