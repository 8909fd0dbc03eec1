/**
 * Records what would end a real gateway process: an 'uncaughtException' or an
 * 'unhandledRejection' (src/main.ts exits on either). A test starts a recorder, sends its
 * requests and expects `events` to be empty.
 */
export interface ProcessErrorRecorder {
  events: Array<{ kind: 'uncaughtException' | 'unhandledRejection'; error: unknown }>;
  stop(): void;
}

export function recordProcessErrors(): ProcessErrorRecorder {
  const events: ProcessErrorRecorder['events'] = [];
  const onException = (error: unknown) => events.push({ kind: 'uncaughtException', error });
  const onRejection = (error: unknown) => events.push({ kind: 'unhandledRejection', error });
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return {
    events,
    stop() {
      process.off('uncaughtException', onException);
      process.off('unhandledRejection', onRejection);
    },
  };
}
