import { runMain } from '@svc/platform/service';
import { webhooksService } from './service.js';

await runMain(webhooksService);
