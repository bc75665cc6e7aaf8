import { chatService } from '@svc/chat';
import { crmService } from '@svc/crm';
import { filesService } from '@svc/files';
import { assembleDocument } from '@svc/platform/http/openapi-document';
import { documentedFragment, type ServiceDefinition } from '@svc/platform/service';
import { tasksService } from '@svc/tasks';
import { webhooksService } from '@svc/webhooks';

/** Anything, whatever is asked of it: route builders only capture their dependencies, never call them. */
// biome-ignore lint/suspicious/noExplicitAny: a stand-in for every dependency of every route builder
const stub: any = new Proxy(() => undefined, {
  get: (_t, p) => (p === 'then' ? undefined : p === Symbol.toPrimitive ? () => '' : stub),
  apply: () => stub,
});

/**
 * The OpenAPI document built in this process from the service definitions (decision 0100): what the gateway serves
 * when these versions run (test/e2e/openapi.test.ts checks that), without starting anything.
 */
export function localDocument(): Record<string, unknown> {
  // biome-ignore lint/suspicious/noExplicitAny: definitions of different config and dependency types in one list
  const services: ServiceDefinition<any, any>[] = [crmService, tasksService, chatService, filesService, webhooksService];
  const fragments = services.map((def) => documentedFragment(def.name, def.api?.(stub, stub) ?? [], def.events ?? []));
  return assembleDocument(fragments, { version: '1.0.0' });
}
