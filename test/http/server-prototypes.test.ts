/**
 * Issue 38: the listener makes its requests and responses with the express app's prototypes, so
 * express's `Object.setPrototypeOf` on every request finds them set (src/http/server.ts).
 */
import { IncomingMessage, type ServerResponse } from 'node:http';
import express from 'express';
import { createHttpServer } from '../../src/http/server';
import { listen, type Listening } from '../helpers/sockets';

describe('the listener of an express app', () => {
  let listening: Listening | undefined;
  afterEach(async () => listening?.close());

  it('makes requests and responses with the app\'s prototypes, which keep express\'s methods and `app`', async () => {
    const app = express();
    app.get('/probe', (req, res) => {
      res.set('X-Seen', req.get('x-probe') ?? '').json({ path: req.path, sameApp: req.app === app && res.app === app });
    });
    const { server } = createHttpServer({ headersTimeoutMs: 5_000, requestTimeoutMs: 10_000 }, app);
    const born: Array<[object, object]> = [];
    // Before express's own listener: the prototypes the server made them with, before express set any.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => born.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]));
    listening = await listen(() => undefined, server);

    const answer = await fetch(`http://127.0.0.1:${listening.port}/probe`, { headers: { 'x-probe': 'yes' } });

    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-seen')).toBe('yes');
    expect(await answer.json()).toEqual({ path: '/probe', sameApp: true });
    expect(born).toHaveLength(1);
    const [requestPrototype, responsePrototype] = born[0];
    expect(requestPrototype).toBe(app.request);
    expect(responsePrototype).toBe(app.response);
  });

  it('leaves a plain listener\'s requests as Node makes them', async () => {
    const { server } = createHttpServer({ headersTimeoutMs: 5_000, requestTimeoutMs: 10_000 }, (_req, res) => res.end('plain'));
    const born: object[] = [];
    server.prependListener('request', (req: IncomingMessage) => born.push(Object.getPrototypeOf(req)));
    listening = await listen(() => undefined, server);

    expect(await (await fetch(`http://127.0.0.1:${listening.port}/`)).text()).toBe('plain');
    expect(born[0]).toBe(IncomingMessage.prototype);
  });
});
