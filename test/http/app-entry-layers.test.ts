/**
 * The webhook fast path (src/http/app-entry.ts, wired in src/app.ts): a POST to a plainly
 * spelled webhook URL does not walk express's router; it runs the app's first layer, the
 * webhook route, and on an error the error handler, and nothing else. A middleware mounted on
 * the app where the router would run it for such a request would be skipped in silence on the
 * busiest route. This compares the app's stack with what the fast path runs: a layer added
 * there fails it until the fast path runs it too (then add it to ENTRY_RUNS).
 */
import type { Express, RequestHandler } from 'express';
import request from 'supertest';
import { testApp } from '../helpers/app';

/** What the fast path runs, in express's order (enterDirectly's `first`, `route`, `onError`). */
const ENTRY_RUNS = ['requestContext', 'route /api/webhooks/trigger/:path', 'error errorHandler'];

const PLAIN_WEBHOOK_URL = '/api/webhooks/trigger/orders';

interface StackLayer {
  name: string;
  handle: { length: number };
  route?: { path: string; _handlesMethod(method: string): boolean };
  match(path: string): boolean;
}

/**
 * The layers express's router would run for a POST to `path`, in order: every matching layer
 * up to the first route that takes a POST (it answers the request), and every matching error
 * handler (one of them answers an error of any layer before it).
 */
function routerWalk(app: Express, path: string): string[] {
  const stack = (app as unknown as { router: { stack: StackLayer[] } }).router.stack;
  const walk: string[] = [];
  let answered = false;
  for (const layer of stack) {
    if (!layer.match(path)) continue;
    if (layer.handle.length === 4) walk.push(`error ${layer.name}`);
    else if (answered) continue;
    else if (!layer.route) walk.push(layer.name);
    else if (layer.route._handlesMethod('post')) {
      walk.push(`route ${layer.route.path}`);
      answered = true;
    }
  }
  return walk;
}

/** The public app with `middleware` mounted right after its first layer, as an `app.use` in src/app.ts's baseApp would mount it. */
async function appWithPlanted(middleware: RequestHandler): Promise<Express> {
  const { app, addTrigger } = testApp();
  await addTrigger('orders', { workflowId: 'wf', workspaceId: 'ws', deployed: true });
  app.use(middleware);
  const stack = (app as unknown as { router: { stack: StackLayer[] } }).router.stack;
  stack.splice(1, 0, stack.pop()!);
  return app;
}

describe('the webhook fast path runs what the router would run for a plain webhook POST', () => {
  it('the public app: its stack runs the request context, the webhook route and the error handler, as the fast path does', () => {
    const { app } = testApp();
    expect(routerWalk(app, PLAIN_WEBHOOK_URL)).toEqual(ENTRY_RUNS);
  });

  it('a middleware mounted on the app where the router runs it (planted here) fails the comparison, and is indeed skipped', async () => {
    const ran: string[] = [];
    const app = await appWithPlanted(function planted(req, _res, next) {
      ran.push(req.url);
      next();
    });
    expect(routerWalk(app, PLAIN_WEBHOOK_URL)).toEqual(['requestContext', 'planted', ...ENTRY_RUNS.slice(1)]);
    expect(routerWalk(app, PLAIN_WEBHOOK_URL)).not.toEqual(ENTRY_RUNS);
    // What the comparison guards against: the router runs it (a spelling the fast path leaves
    // to the router: a trailing slash), the fast path does not.
    const viaRouter = await request(app).post(`${PLAIN_WEBHOOK_URL}/`).send({ a: 1 });
    const viaEntry = await request(app).post(PLAIN_WEBHOOK_URL).send({ a: 1 });
    expect([viaRouter.status, viaEntry.status]).toEqual([200, 200]);
    expect(ran).toEqual([`${PLAIN_WEBHOOK_URL}/`]);
  });

  it('an error handler added before the last one fails it too', () => {
    const { app } = testApp();
    app.use(function reportErrors(error: unknown, _req: unknown, _res: unknown, next: (error: unknown) => void) {
      next(error);
    });
    const stack = (app as unknown as { router: { stack: StackLayer[] } }).router.stack;
    stack.splice(stack.length - 2, 0, stack.pop()!);
    expect(routerWalk(app, PLAIN_WEBHOOK_URL)).toEqual([...ENTRY_RUNS.slice(0, 2), 'error reportErrors', 'error errorHandler']);
  });
});
