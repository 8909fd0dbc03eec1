import type { Attributes, Span } from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';
import type { RedisClient } from '../redis/connection';

/** Starts a span under the current request, or returns undefined outside one. */
export type StartChildSpan = (name: string, attributes: Attributes) => Span | undefined;

interface SentCommand {
  name: string;
  promise: Promise<unknown>;
}

/**
 * Every command sent on `client` during a request becomes a CLIENT span (what
 * @opentelemetry/instrumentation-ioredis does to the prototype, here on one instance and
 * without module hooks). Only the command's name is recorded, never its arguments: they hold
 * idempotency keys and registry records.
 */
export function instrumentRedisClient(client: RedisClient, startSpan: StartChildSpan): void {
  // An auto-pipelined command reaches sendCommand a tick later, in the context of whichever
  // caller queued the pipeline first (another request, or none): its span would hang under the
  // wrong parent, or be missing. With spans exported, each command is sent as it is issued.
  (client.options as { enableAutoPipelining?: boolean }).enableAutoPipelining = false;
  const send = client.sendCommand.bind(client) as (command: SentCommand, ...rest: unknown[]) => unknown;
  // A cluster's options name no single server: its spans carry no address.
  const { host, port } = client.options as { host?: string; port?: number };
  (client as unknown as { sendCommand: typeof send }).sendCommand = (command, ...rest) => {
    const operation = command.name.toUpperCase();
    const span = startSpan(operation, {
      'db.system.name': 'redis',
      'db.operation.name': operation,
      ...(host !== undefined && { 'server.address': host }),
      ...(port !== undefined && { 'server.port': port }),
    });
    if (span) {
      command.promise.then(
        () => span.end(),
        (error: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          span.end();
        },
      );
    }
    return send(command, ...rest);
  };
}
