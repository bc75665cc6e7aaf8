import type { DbDefinition } from '@svc/platform/service';
import { tasksService } from './service.js';

export const dbDefinition: DbDefinition = tasksService.db;
