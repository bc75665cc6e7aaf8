import { replayMain } from '@svc/platform/events/replay';
import { chatService } from './service.js';

// Operators: `npm run events:replay -- --service chat --company <uuid> --since <ISO time> [--until <ISO time>]`.
await replayMain(chatService);
