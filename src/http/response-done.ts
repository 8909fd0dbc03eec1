import type { ServerResponse } from 'node:http';

const HOOKS = Symbol('whenClosed');
type WithHooks = ServerResponse & { [HOOKS]?: (() => void)[] };

/**
 * Runs `hook` once the response is closed (answered, refused or cut off: check
 * `res.writableFinished`), in the order the hooks were added. However many parts of the
 * gateway wait for a response to end, it carries one `close` listener, shared by all
 * responses: a listener added and a `once` wrapper built per part per request cost more
 * than the parts' own work.
 */
export function whenClosed(res: ServerResponse, hook: () => void): void {
  const hooks = (res as WithHooks)[HOOKS];
  if (hooks) return void hooks.push(hook);
  (res as WithHooks)[HOOKS] = [hook];
  res.on('close', runHooks);
}

function runHooks(this: WithHooks): void {
  const hooks = this[HOOKS];
  if (!hooks) return;
  this[HOOKS] = undefined;
  for (const hook of hooks) {
    try {
      hook();
    } catch (error) {
      // A throw from a 'close' listener would end the process (contract §2.9): reported instead.
      process.emitWarning(error instanceof Error ? error : new Error(String(error)), 'ResponseHookError');
    }
  }
}
