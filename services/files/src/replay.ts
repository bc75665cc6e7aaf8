import { replayMain } from '@svc/platform/events/replay';
import { filesService } from './service.js';

// Operators: `npm run events:replay -- --service files --company <uuid> --since <ISO time> [--until <ISO time>]`.
await replayMain(filesService);
