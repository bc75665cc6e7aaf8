import { Writable } from 'node:stream';
import { type Client, credentials, Metadata, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { expect } from 'chai';
import { callUnary, type RunningGrpcServer, startGrpcServer, unary } from '../src/grpc/server.js';
import { createLogger } from '../src/logging.js';
import { withRequestId } from '../src/request-id.js';
import { eventually } from '../src/testing.js';

type Line = Record<string, unknown>;
type Say = { mark: string };
type Said = { by: string };
type SayMethod = (req: Say, md: Metadata, options: { deadline: Date }, cb: (err: ServiceError | null, res: Said) => void) => unknown;
type EchoClient = Client & { say: SayMethod };

/** A one-method service of JSON messages: real grpc-js on both ends, a request the test can mark. */
const json = { serialize: (v: unknown) => Buffer.from(JSON.stringify(v)), deserialize: (b: Buffer) => JSON.parse(b.toString()) };
const EchoService = {
  say: {
    path: '/test.Echo/Say',
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};
const Echo = makeGenericClientConstructor(EchoService, 'test.Echo');
const echoAt = (port: number) => new Echo(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as EchoClient;

/**
 * A request id crosses gRPC (decision 0140): the caller's id rides the call's `x-request-id` metadata, the handler
 * runs under it, so the lines the called service writes carry the request_id of the request that caused them. Two
 * real servers stand for a chain of services: "edge" (tasks, say) serves its call by calling "core" (crm).
 */
describe('request ids across gRPC calls', () => {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const edgeLog = createLogger('edge', 'info', sink);
  const coreLog = createLogger('core', 'info', sink);
  let core: RunningGrpcServer;
  let edge: RunningGrpcServer;
  let toCore: EchoClient;
  let toEdge: EchoClient;
  const linesOf = (mark: string) => lines.filter((l) => l.mark === mark);

  before(async () => {
    core = await startGrpcServer('127.0.0.1', 0, [
      {
        definition: EchoService,
        implementation: {
          say: unary(coreLog, async (req: Say): Promise<Said> => {
            await new Promise((r) => setTimeout(r, 2));
            coreLog.info({ mark: req.mark }, 'core served');
            if (req.mark.startsWith('fail')) throw new Error('core broke');
            return { by: 'core' };
          }),
        },
      },
    ]);
    toCore = echoAt(core.port);
    edge = await startGrpcServer('127.0.0.1', 0, [
      {
        definition: EchoService,
        implementation: {
          say: unary(edgeLog, async (req: Say): Promise<Said> => {
            edgeLog.info({ mark: req.mark }, 'edge served');
            await callUnary(toCore, toCore.say, req);
            return { by: 'edge' };
          }),
        },
      },
    ]);
    toEdge = echoAt(edge.port);
  });
  after(async () => {
    toCore?.close();
    toEdge?.close();
    await Promise.all([core?.stop(100), edge?.stop(100)]);
  });

  const ask = (mark: string, requestId?: string) => {
    const call = () => callUnary(toCore, toCore.say, { mark });
    return requestId === undefined ? call() : withRequestId(requestId, call);
  };

  it('writes the caller’s request id on the lines the called service writes, after an await', async () => {
    expect(await ask('plain', 'rid-grpc-1')).to.deep.equal({ by: 'core' });
    expect(linesOf('plain')).to.have.length(1);
    expect(linesOf('plain')[0]).to.include({ service: 'core', request_id: 'rid-grpc-1' });
  });

  it('carries it on through a service that calls another while it serves', async () => {
    await withRequestId('rid-chain-7', () => callUnary(toEdge, toEdge.say, { mark: 'hop' }));
    const hop = linesOf('hop');
    expect(hop.map((l) => [l.service, l.request_id])).to.deep.equal([
      ['edge', 'rid-chain-7'],
      ['core', 'rid-chain-7'],
    ]);
  });

  it('writes it on the handler’s failure line too', async () => {
    let failed: unknown;
    await ask('fail-1', 'rid-fail-1').catch((err: unknown) => {
      failed = err;
    });
    expect(failed).to.be.instanceOf(Error);
    const failure = await eventually(() => lines.find((l) => l.msg === 'grpc handler failed' && l.request_id === 'rid-fail-1'));
    expect(failure).to.include({ service: 'core', level: 50 });
  });

  it('writes none for a call made outside a request, and keeps concurrent calls apart', async () => {
    await Promise.all([ask('bare'), ask('one', 'rid-a'), ask('two', 'rid-b')]);
    expect(linesOf('bare')[0]).to.not.have.property('request_id');
    expect(linesOf('one')[0]).to.include({ request_id: 'rid-a' });
    expect(linesOf('two')[0]).to.include({ request_id: 'rid-b' });
  });

  it('ignores an id that is not well formed (requestIdOf’s rule) and does not make one up', async () => {
    const raw = (mark: string, value: string) => {
      const metadata = new Metadata();
      metadata.set('x-request-id', value);
      return new Promise<void>((resolve, reject) =>
        toCore.say({ mark }, metadata, { deadline: new Date(Date.now() + 2000) }, (err) => (err ? reject(err) : resolve())),
      );
    };
    await raw('long', 'x'.repeat(129));
    await raw('spaced', 'a b');
    await raw('good', 'ok-1');
    expect(linesOf('long')[0]).to.not.have.property('request_id');
    expect(linesOf('spaced')[0]).to.not.have.property('request_id');
    expect(linesOf('good')[0]).to.include({ request_id: 'ok-1' });
  });
});
