import { Writable } from 'node:stream';
import { type Client, credentials, makeGenericClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { callUnary, type RunningGrpcServer, startGrpcServer, unary } from '@svc/platform/grpc/server';
import { createLogger } from '@svc/platform/logging';
import { CrmServiceService } from '@svc/proto/crm/v1/crm';
import { FileCountServiceService } from '@svc/proto/crm/v1/files';
import { PersonServiceService } from '@svc/proto/crm/v1/persons';
import { ProposalFileServiceService } from '@svc/proto/crm/v1/proposals';
import { RecordServiceService } from '@svc/proto/crm/v1/records';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { type Stack, startStack } from '../support/stack.js';
import { seedTaskTenant, type TaskTenant } from '../support/tasks.js';

type Line = Record<string, unknown>;
const CRM_SERVICES: Record<string, ServiceDefinition> = {
  'crm.v1.CrmService': CrmServiceService as unknown as ServiceDefinition,
  'crm.v1.RecordService': RecordServiceService as unknown as ServiceDefinition,
  'crm.v1.PersonService': PersonServiceService as unknown as ServiceDefinition,
  'crm.v1.FileCountService': FileCountServiceService as unknown as ServiceDefinition,
  'crm.v1.ProposalFileService': ProposalFileServiceService as unknown as ServiceDefinition,
};

/**
 * The request id of a request through the gateway reaches the service that service calls over gRPC (decision 0140).
 * tasks is pointed at a front of crm in this process: a gRPC server of every crm service, each method served by the
 * platform's `unary` with a logger the test reads, which writes one line and forwards the call to the real crm with
 * `callUnary`. Its lines are the lines crm's handlers would write.
 */
describe('x-request-id across a gRPC call: tasks asks crm under the request’s id', () => {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const frontLog = createLogger('crm-front', 'info', sink);
  let front: RunningGrpcServer;
  const upstream: Record<string, Client & Record<string, unknown>> = {};
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let t: TaskTenant;

  before(async function () {
    this.timeout(90_000);
    front = await startGrpcServer(
      '127.0.0.1',
      0,
      Object.entries(CRM_SERVICES).map(([name, definition]) => ({
        definition,
        implementation: Object.fromEntries(
          Object.entries(definition).map(([method, { path }]) => [
            method,
            unary(frontLog, async (request: unknown) => {
              frontLog.info({ path }, 'crm call');
              const to = upstream[name]!;
              return callUnary(to, to[method] as Parameters<typeof callUnary>[1], request);
            }),
          ]),
        ),
      })),
    );
    stack = await startStack({ tasks: { CRM_GRPC_URL: `127.0.0.1:${front.port}` } });
    for (const [name, definition] of Object.entries(CRM_SERVICES)) {
      upstream[name] = new (makeGenericClientConstructor(definition, name))(
        stack.services.crm.grpcAddress,
        credentials.createInsecure(),
      ) as Client & Record<string, unknown>;
    }
    call = client(stack.gatewayUrl).call;
    t = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
  });
  after(async () => {
    for (const c of Object.values(upstream)) c.close();
    await stack?.stop();
    await front?.stop(100);
  });

  it('writes the caller’s x-request-id on the lines crm writes for a task creation that checks its lead', async () => {
    const id = `rid-task-${Date.now()}`;
    const res = await call('POST', '/integrations/external/tasks', {
      token: t.key.key,
      headers: { 'x-request-id': id },
      body: {
        crm_task_type_id: t.types.call.id,
        title: 'Call about the lead',
        start_date: '2026-12-01T13:00:00.000Z',
        crm_lead_id: t.leads.team.id,
      },
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.headers.get('x-request-id')).to.equal(id);
    expect(res.body.crm_lead).to.include({ id: t.leads.team.id });
    const mine = lines.filter((l) => l.request_id === id);
    expect(mine.map((l) => l.path)).to.include('/crm.v1.RecordService/GetRecordSummaries');
    for (const l of mine) expect(l).to.include({ service: 'crm-front', msg: 'crm call' });
  });

  it('writes the id the gateway made when the caller sent none, and another per request', async () => {
    const before = lines.length;
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await call('GET', `/integrations/external/tasks?crm_lead_id=${t.leads.team.id}`, { token: t.key.key });
      expect(res.status, res.text).to.equal(200);
      ids.push(res.headers.get('x-request-id')!);
    }
    const seen = lines.slice(before).map((l) => l.request_id);
    expect(ids[0]).to.not.equal(ids[1]);
    expect(seen).to.include(ids[0]).and.include(ids[1]);
    expect(
      seen.every((s) => ids.includes(s as string)),
      JSON.stringify(seen),
    ).to.equal(true);
  });
});
