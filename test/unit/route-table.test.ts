/**
 * The route table (src/routes/table.ts) is the one list of routes: the OpenAPI document is
 * generated from it, and here the routes the two express apps really serve are compared with
 * it, method by method and listener by listener. A route added to a router and not to the
 * table, or left in the table after its router dropped it, fails this test.
 */
import request from 'supertest';
import type { Express } from 'express';
import { ROUTES } from '../../src/routes/table';
import { testApp } from '../helpers/app';

const PROBED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** `/admin/triggers/:id` and `/admin/triggers/{path}` alike → `/admin/triggers/{}`. */
const shape = (path: string) => path.replace(/:[A-Za-z]+|\{[A-Za-z]+\}/g, '{}');

interface RouteLayer {
  path: string;
  methods: Record<string, boolean>;
}

/** The route layers of an express app, through its mounted routers. */
function routeLayers(app: Express): RouteLayer[] {
  const found: RouteLayer[] = [];
  const walk = (stack: any[]) => {
    for (const layer of stack) {
      if (layer.route) found.push({ path: layer.route.path, methods: layer.route.methods });
      else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as any).router.stack);
  return found;
}

describe('the route table', () => {
  const t = testApp();
  /** A trigger whose provider answers a GET handshake, so that GET on a trigger path is served, not 405. */
  const HANDSHAKE_TRIGGER = 'route-table-probe';
  const HANDSHAKE_QUERY = 'hub.mode=subscribe&hub.verify_token=route-table-verify&hub.challenge=1';

  beforeAll(async () => {
    await t.addTrigger(HANDSHAKE_TRIGGER, {
      workflowId: 'wf',
      workspaceId: 'ws',
      deployed: true,
      provider: { name: 'meta', secrets: ['route-table-app-secret'], options: { verifyToken: 'route-table-verify' } },
    });
  });

  /**
   * `listener METHOD shape` of every route the app serves. A route answering every method
   * (`router.all`) decides per method itself: a method is served unless it answers 405.
   */
  async function served(listener: 'public' | 'admin', app: Express): Promise<string[]> {
    const routes: string[] = [];
    for (const layer of routeLayers(app)) {
      const explicit = Object.keys(layer.methods).filter((method) => method !== '_all');
      let methods = explicit.map((method) => method.toUpperCase());
      if (layer.methods._all) {
        // A GET on a trigger is served only as its provider's handshake: send Meta's.
        const url = `${layer.path.replace(':path', HANDSHAKE_TRIGGER).replace(/:[A-Za-z]+/g, 'probe')}?${HANDSHAKE_QUERY}`;
        methods = [];
        for (const method of PROBED_METHODS) {
          const answer = await request(app)[method.toLowerCase() as 'get'](url);
          if (answer.status !== 405) methods.push(method);
        }
        expect(`${url}: ${methods.length}`).not.toBe(`${url}: 0`);
      }
      routes.push(...methods.map((method) => `${listener} ${method} ${shape(layer.path)}`));
    }
    return routes;
  }

  it('names exactly the routes the public and admin listeners serve', async () => {
    const actual = [...(await served('public', t.app)), ...(await served('admin', t.admin))].sort();
    const table = ROUTES.flatMap((route) => route.listeners.map((listener) => `${listener} ${route.method.toUpperCase()} ${shape(route.path)}`));
    const expected = [...table].sort();
    expect(actual.length).toBeGreaterThan(15);
    expect(actual).toEqual(expected);
  });


  it('gives every route its own operationId and one entry per method and path', () => {
    const ids = ROUTES.map((route) => route.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const keys = ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
