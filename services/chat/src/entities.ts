import { platformEntities } from '@svc/platform/service';
import { Agent, InstagramAccount, MessageTemplate, WhatsappNumber } from './accounts/account.entity.js';
import { Chat, ChatParticipant, CopilotAction, FlowSession } from './chats/chat.entity.js';
import { ChatIdempotencyKey } from './idempotency/idempotency.entity.js';
import { Message, MessageReaction } from './messages/message.entity.js';
import { ScheduledMessage } from './scheduled/scheduled.entity.js';

export const chatEntities = [
  ...platformEntities,
  WhatsappNumber,
  InstagramAccount,
  Agent,
  MessageTemplate,
  Chat,
  ChatParticipant,
  FlowSession,
  CopilotAction,
  Message,
  MessageReaction,
  ScheduledMessage,
  ChatIdempotencyKey,
];
