import { join } from 'node:path';
import type { GatewayProcessOptions, RunningGateway } from '../helpers/server';

/** Bytes in use right after a full collection in the gateway process. */
export interface LiveMemory {
  heapUsed: number;
  external: number;
  rss: number;
}

/** Starts the gateway so that liveMemory() can ask it for a full collection. */
export const COLLECTABLE: GatewayProcessOptions = {
  nodeArgs: ['--expose-gc', '--require', join(__dirname, 'gc-on-request.js')],
  ipc: true,
};

/** Runs a full collection in a gateway started with COLLECTABLE and returns what is still in use. */
export function liveMemory(gateway: RunningGateway, timeoutMs = 10_000): Promise<LiveMemory> {
  const { child } = gateway;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`the gateway did not answer 'gc' within ${timeoutMs} ms (started without COLLECTABLE?)`));
    }, timeoutMs);
    const onMessage = (message: unknown) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message as LiveMemory);
    };
    child.on('message', onMessage);
    if (!child.send) {
      clearTimeout(timer);
      reject(new Error('the gateway has no IPC channel: start it with COLLECTABLE'));
      return;
    }
    child.send('gc');
  });
}
