import { credentials } from '@grpc/grpc-js';
import { callUnary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import { ChatLinkServiceClient, type PersonChat } from '@svc/proto/chat/v1/chat';
import type { ChatSource } from '../sales/sales.chats.js';

/** Milliseconds; past it the chat fields are empty and the read or event goes on. */
const DEADLINE_MS = 500;

/** Unset, failing or late chat answers no chats rather than failing a read or an event (decisions 0066, 0130). */
export class ChatLinks implements ChatSource {
  private readonly client: ChatLinkServiceClient | null;

  constructor(
    address: string | undefined,
    private readonly logger: Logger,
  ) {
    this.client = address ? new ChatLinkServiceClient(address, credentials.createInsecure()) : null;
  }

  async personChats(companyId: string, personIds: string[]): Promise<PersonChat[]> {
    if (!this.client || !personIds.length) return [];
    try {
      const { chats } = await callUnary(
        this.client,
        this.client.getPersonChats,
        { company_id: companyId, person_ids: personIds },
        DEADLINE_MS,
      );
      return chats;
    } catch (err) {
      this.logger.warn({ err }, 'chat fields left empty: chat did not answer');
      return [];
    }
  }

  close(): void {
    this.client?.close();
  }
}
