export { planList } from './chats/chat.list.js';
export { CHAT_SELECT, listStatement } from './chats/chat.store.js';
export { chatService } from './service.js';
