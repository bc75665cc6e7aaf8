import { ConfigError, startGateway } from './gateway.js';

try {
  const gateway = await startGateway();
  const shutdown = () =>
    gateway.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
} catch (err) {
  console.error(err instanceof ConfigError ? `gateway: ${err.message}` : err);
  process.exit(1);
}
