import { replayMain } from '@svc/platform/events/replay';
import { tasksService } from './service.js';

// Operators: `npm run events:replay -- --service tasks --company <uuid> --since <ISO time> [--until <ISO time>]`.
await replayMain(tasksService);
