export { filesService } from './service.js';
