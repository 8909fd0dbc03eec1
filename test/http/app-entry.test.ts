import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { enterDirectly } from '../../src/http/app-entry';
import { Refusal } from '../../src/outcomes/refusal';

/**
 * An app whose router records every request it walks, with `/direct/*` taken at the entry: the
 * app's first layer (recorded too), then `serve`.
 */
function appWith(serve: RequestHandler, onError: ErrorRequestHandler = (error, _req, res, _next) => res.status(599).json({ error: String(error) })) {
  const app = express();
  const walked: string[] = [];
  const first: RequestHandler = (req, _res, next) => {
    walked.push(`first ${req.url}`);
    next();
  };
  app.use(first);
  app.use((req, _res, next) => {
    walked.push(`router ${req.url}`);
    next();
  });
  app.post('/routed', (_req, res) => void res.status(202).json({ via: 'router' }));
  app.use(onError);
  enterDirectly(app, { first, route: { takes: (req) => req.url!.startsWith('/direct/'), serve }, onError });
  return { app, walked };
}

describe('a route taken at the app entry (src/http/app-entry.ts)', () => {
  it('is served without the router, with the request and response express would give it', async () => {
    const { app, walked } = appWith((req, res) => {
      res.status(201).json({ header: req.get('x-probe'), originalUrl: req.originalUrl, baseUrl: req.baseUrl, same: req.res === res && res.req === req });
    });
    const res = await request(app).post('/direct/one?a=1').set('X-Probe', 'yes').send({});
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ header: 'yes', originalUrl: '/direct/one?a=1', baseUrl: '', same: true });
    expect(walked).toEqual(['first /direct/one?a=1']);
  });

  it('leaves every other request to express, unchanged', async () => {
    const { app, walked } = appWith(() => {
      throw new Error('not for this request');
    });
    const res = await request(app).post('/routed').send({});
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ via: 'router' });
    expect(walked).toEqual(['first /routed', 'router /routed']);
  });

  it("sends the route's errors to the error handler: passed to next, thrown, or a next() that no route answered", async () => {
    const seen: unknown[] = [];
    const onError: ErrorRequestHandler = (error, _req, res, _next) => {
      seen.push(error instanceof Refusal ? error.reason : (error as Error).message);
      res.status(418).json({});
    };
    const passed = appWith((_req, _res, next) => next(new Error('passed')), onError);
    const thrown = appWith(() => {
      throw new Error('thrown');
    }, onError);
    const unanswered = appWith((_req, _res, next) => next(), onError);
    for (const { app } of [passed, thrown, unanswered]) expect((await request(app).post('/direct/x').send({})).status).toBe(418);
    expect(seen).toEqual(['passed', 'thrown', 'not_found']);
  });

  it('cuts the connection when the error handler itself throws, reports it, and goes on serving', async () => {
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const { app } = appWith(
        (req, res, next) => (req.url === '/direct/fine' ? void res.status(200).json({}) : next(new Error('route failed'))),
        () => {
          throw new Error('error handler failed');
        },
      );
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const url = (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
      try {
        await expect(fetch(url('/direct/broken'), { method: 'POST', body: '{}' })).rejects.toThrow();
        expect((await fetch(url('/direct/fine'), { method: 'POST', body: '{}' })).status).toBe(200);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      expect(emitWarning).toHaveBeenCalledWith(expect.objectContaining({ message: 'error handler failed' }), 'ErrorHandlerError');
    } finally {
      emitWarning.mockRestore();
    }
  });
});
