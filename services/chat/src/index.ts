export { chatService } from './service.js';
