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
  let failure: { error: unknown } | undefined;
  for (const hook of hooks) {
    try {
      hook();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error; // as a listener's throw would have: to the emitter
}
