/**
 * Preloaded into the gateway child by the bad-input scenario (`node --expose-gc --require`):
 * on the message 'gc' it runs a full collection and answers with the memory still in use, so
 * the leak check compares live memory, not garbage V8 has not collected yet.
 */
import type { LiveMemory } from './live-memory';

const collect = (globalThis as { gc?: () => void }).gc;
if (process.send && collect) {
  process.on('message', (message) => {
    if (message !== 'gc') return;
    collect();
    const usage = process.memoryUsage();
    const live: LiveMemory = { heapUsed: usage.heapUsed, external: usage.external, rss: usage.rss };
    process.send!(live);
  });
  // The channel must not keep the gateway alive when it shuts down.
  process.channel?.unref();
}
