export { tasksService } from './service.js';
