import { runInThisContext } from 'node:vm';

/**
 * Records what would end a real gateway process: an 'uncaughtException' or an
 * 'unhandledRejection' (src/main.ts exits on either). A test starts a recorder, sends its
 * requests and expects `events` to be empty.
 */
export interface ProcessErrorRecorder {
  events: Array<{ kind: 'uncaughtException' | 'unhandledRejection'; error: unknown }>;
  /**
   * Settles at the next event: race it with a request, whose answer never comes when its
   * handler threw out of the request (the process would have exited).
   */
  nextEvent(): Promise<void>;
  stop(): void;
}

/**
 * The process Node runs. Jest gives each test file a copy of `process` whose listeners never hear
 * the real process's events; vm's runInThisContext evaluates in the host's context, not the test's.
 */
const hostProcess = runInThisContext('process') as NodeJS.Process;

export function recordProcessErrors(): ProcessErrorRecorder {
  const events: ProcessErrorRecorder['events'] = [];
  let waiting: Array<() => void> = [];
  const record = (event: ProcessErrorRecorder['events'][number]) => {
    events.push(event);
    for (const wake of waiting.splice(0)) wake();
  };
  const onException = (error: unknown) => record({ kind: 'uncaughtException', error });
  const onRejection = (error: unknown) => record({ kind: 'unhandledRejection', error });
  hostProcess.on('uncaughtException', onException);
  hostProcess.on('unhandledRejection', onRejection);
  return {
    events,
    nextEvent: () => new Promise<void>((resolve) => waiting.push(resolve)),
    stop() {
      waiting = [];
      hostProcess.off('uncaughtException', onException);
      hostProcess.off('unhandledRejection', onRejection);
    },
  };
}
