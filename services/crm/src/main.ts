import { runMain } from '@svc/platform/service';
import { crmService } from './service.js';

await runMain(crmService);
