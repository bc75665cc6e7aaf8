export { encodeCursor, planList } from './chats/chat.list.js';
export { CHAT_SELECT, listStatement } from './chats/chat.store.js';
export { chatSummaryView } from './chats/chat.view.js';
export { chatService } from './service.js';
