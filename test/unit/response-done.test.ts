import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { whenClosed } from '../../src/http/response-done';

const fakeResponse = () => new EventEmitter() as unknown as ServerResponse;

test('every hook of a response runs once, in order, on one close listener', () => {
  const res = fakeResponse();
  const ran: string[] = [];
  whenClosed(res, () => ran.push('access log'));
  whenClosed(res, () => ran.push('delivery log'));
  expect(res.listenerCount('close')).toBe(1);
  res.emit('close');
  res.emit('close');
  expect(ran).toEqual(['access log', 'delivery log']);
});

test('a hook that throws does not stop the others and is reported as a warning, not thrown to the emitter', () => {
  const res = fakeResponse();
  const ran: string[] = [];
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(((warning: Error) => onWarning(warning)) as typeof process.emitWarning);
  try {
    whenClosed(res, () => {
      throw new Error('hook bug');
    });
    whenClosed(res, () => ran.push('after'));
    expect(() => res.emit('close')).not.toThrow();
  } finally {
    emitWarning.mockRestore();
  }
  expect(ran).toEqual(['after']);
  expect(warnings.map((w) => w.message)).toEqual(['hook bug']);
});
