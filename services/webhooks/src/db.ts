import type { DbDefinition } from '@svc/platform/service';
import { webhooksService } from './service.js';

export const dbDefinition: DbDefinition = webhooksService.db;
