import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { loadConfig, redactConfig } from './config/load';
import { createContainer } from './container';
import { createLogger } from './observability/logger';
import { seedRegistry } from './registry/seed-file';

const EXIT_CONFIG = 2;

/** Process entry: config → container → app → listen; signals; exit codes. */
async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) return exitWithProblems(loaded.problems);
  const config = loaded.config;
  const logger = createLogger(config.LOG_LEVEL);
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    process.exit(1);
  });
  process.on('unhandledRejection', (error) => {
    logger.fatal({ err: error }, 'unhandled rejection');
    process.exit(1);
  });
  logger.info({ config: redactConfig(config) }, 'starting');

  const container = createContainer(config, logger);
  await container.start();
  let seedRetry: NodeJS.Timeout | undefined;
  if (config.TRIGGERS_FILE) {
    const file = config.TRIGGERS_FILE;
    const seed = () => seedRegistry(container.deps.registry, file);
    const seeded = await seed().catch((error: unknown) => error as Error);
    if (!(seeded instanceof Error)) {
      if (seeded.problems.length > 0) return exitWithProblems(seeded.problems);
      logger.info({ triggers: seeded.triggers, channels: seeded.channels }, 'registry seeded from TRIGGERS_FILE');
    } else {
      // The file is valid but the registry (Redis) cannot be written yet: start anyway, not
      // ready, and apply the file as soon as the registry answers.
      logger.warn({ err: { message: seeded.message } }, 'registry unavailable: TRIGGERS_FILE will be applied when it is back');
      let pending = true;
      container.deps.checks.push({
        name: 'triggers-file',
        ping: async () => {
          if (pending) throw new Error('TRIGGERS_FILE not applied yet');
        },
      });
      const retry = () => {
        seedRetry = setTimeout(async () => {
          const again = await seed().catch((error: unknown) => error as Error);
          if (again instanceof Error) return retry();
          pending = false;
          if (again.problems.length > 0) logger.error({ problems: again.problems }, 'TRIGGERS_FILE not applied');
          else logger.info({ triggers: again.triggers, channels: again.channels }, 'registry seeded from TRIGGERS_FILE');
        }, 1000);
      };
      retry();
    }
  }
  if (!config.ADMIN_TOKEN) logger.warn('ADMIN_TOKEN is not set: the admin API answers 404');

  const server = createServer(createApp(container.deps));
  server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000; // a slow sender cannot hold a connection for long
  server.listen(config.PORT, config.HOST);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  logger.info({ port, mode: { redis: Boolean(config.REDIS_URL), kafka: Boolean(config.KAFKA_BROKERS) } }, 'listening');

  let stopping = false;
  const drain = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    container.deps.lifecycle.draining = true;
    clearTimeout(seedRetry);
    logger.info({ signal, graceMs: config.SHUTDOWN_GRACE_MS }, 'draining');
    const deadline = setTimeout(() => {
      logger.error('grace period exceeded; exiting with requests still open');
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS);
    deadline.unref();
    const closed = new Promise((resolve) => server.close(resolve));
    // Keep-alive connections become idle as their last request ends; close them as they do.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    await closed;
    clearInterval(sweep);
    await container.close();
    clearTimeout(deadline);
    logger.info('stopped');
    logger.flush(() => process.exit(0));
  };
  process.on('SIGTERM', () => void drain('SIGTERM'));
  process.on('SIGINT', () => void drain('SIGINT'));
}

function exitWithProblems(problems: string[]): void {
  for (const problem of problems) process.stderr.write(`config error: ${problem}\n`);
  process.exit(EXIT_CONFIG);
}

void main();
