import './runtime-flags';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminApp, createApp } from './app';
import { settingsHelp } from './config/help';
import { loadConfig, redactConfig } from './config/load';
import { unknownSettings } from './config/unknown';
import { createContainer, httpServerSettings } from './container';
import { destroyLingeringSockets } from './http/lingering-close';
import { createHttpServer } from './http/server';
import { createLogger } from './observability/logger';
import { TriggersFile } from './registry/triggers-file';

const EXIT_CONFIG = 2;
/** Shorter admin tokens are accepted (contract §1) and warned about at start. */
const ADMIN_TOKEN_ADVISED_LENGTH = 16;

/** Process entry: config → container → app → listen; signals; exit codes. */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(settingsHelp());
    return;
  }
  if (args.length > 0) return exitWithProblems([`unknown argument ${args[0]}: settings are environment variables (--help lists them)`]);
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
  // The name only: the value of a misspelled secret setting is still a secret.
  for (const { name, closest } of unknownSettings(process.env)) {
    logger.warn({ setting: name, closest }, `unknown setting ${name} is ignored; did you mean ${closest}?`);
  }

  const container = createContainer(config, logger);
  await container.start();
  const triggersFile = config.TRIGGERS_FILE && new TriggersFile(container.deps.registry, config.TRIGGERS_FILE, logger);
  if (triggersFile) {
    const problems = await triggersFile.apply();
    if (problems.length > 0) return exitWithProblems(problems);
    container.deps.checks.push(triggersFile.check);
  }
  if (!config.ADMIN_TOKEN) logger.warn('ADMIN_TOKEN is not set: the admin API answers 404');
  else if (config.ADMIN_TOKEN.length < ADMIN_TOKEN_ADVISED_LENGTH) {
    logger.warn({ advisedLength: ADMIN_TOKEN_ADVISED_LENGTH }, 'ADMIN_TOKEN is short: a long random token is much harder to guess');
  }

  const { metrics } = container.deps;
  const countTimeout = () => metrics.requests.inc({ route: 'other', outcome: 'timed_out', reason: 'request_timeout', status: 408 });
  const listener = httpServerSettings(config);
  const ingress = createHttpServer(listener, createApp(container.deps), countTimeout);
  const admin = createHttpServer(listener, createAdminApp(container.deps), countTimeout);
  const [port, adminPort] = await Promise.all([
    listen(ingress.server, config.PORT, config.HOST),
    listen(admin.server, config.ADMIN_PORT, config.HOST),
  ]);
  logger.info({ port, adminPort, mode: { redis: Boolean(config.REDIS_URL || config.REDIS_CLUSTER_NODES), kafka: Boolean(config.KAFKA_BROKERS) } }, 'listening');

  let stopping = false;
  const drain = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    container.deps.lifecycle.draining = true;
    if (triggersFile) triggersFile.stop();
    logger.info({ signal, graceMs: config.SHUTDOWN_GRACE_MS }, 'draining');
    const deadline = setTimeout(() => {
      logger.error('grace period exceeded; exiting with requests still open');
      process.exit(1);
    }, config.SHUTDOWN_GRACE_MS);
    deadline.unref();
    const servers = [ingress, admin];
    const close = (server: Server) => new Promise((resolve) => server.close(resolve));
    // Keep-alive connections become idle as their last request ends; close them as they do,
    // and those whose headers are late. Senders whose body was refused already have their
    // answer: they are not waited for.
    const sweep = setInterval(() => {
      destroyLingeringSockets();
      for (const s of servers) s.closeStalledConnections();
    }, 50);
    // The admin listener answers /readyz (503, draining) until the public one has drained, so a
    // load balancer's probe sees the pod leave rather than a refused connection (contract §9).
    await close(ingress.server);
    await close(admin.server);
    clearInterval(sweep);
    await container.close();
    clearTimeout(deadline);
    logger.info('stopped');
    logger.flush(() => process.exit(0));
  };
  process.on('SIGTERM', () => void drain('SIGTERM'));
  process.on('SIGINT', () => void drain('SIGINT'));
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  server.listen(port, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

function exitWithProblems(problems: string[]): void {
  for (const problem of problems) process.stderr.write(`config error: ${problem}\n`);
  process.exit(EXIT_CONFIG);
}

void main();
