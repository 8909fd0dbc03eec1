import { classifyContentType } from '../../src/body/content-type';

describe('classifyContentType', () => {
  it.each([
    ['application/json', { kind: 'json', essence: 'application/json' }],
    ['Application/JSON; charset=UTF-8', { kind: 'json', essence: 'application/json', charset: 'utf-8' }],
    ['application/vnd.api+json', { kind: 'json', essence: 'application/vnd.api+json' }],
    ['application/cloudevents+json; charset="utf-8"', { kind: 'json', essence: 'application/cloudevents+json', charset: 'utf-8' }],
    ['application/x-www-form-urlencoded', { kind: 'form', essence: 'application/x-www-form-urlencoded' }],
    ['multipart/form-data; boundary=abc', { kind: 'multipart', essence: 'multipart/form-data' }],
    ['text/plain;charset=iso-8859-1', { kind: 'text', essence: 'text/plain', charset: 'iso-8859-1' }],
    [' text/plain ', { kind: 'text', essence: 'text/plain' }],
  ])('%s', (header, expected) => {
    expect(classifyContentType(header)).toEqual(expected);
  });

  it.each([undefined, '', 'application/xml', 'text/html', 'image/png', 'application/octet-stream', 'text/json+xml', 'application/jsonp', 'multipart/mixed', 'json'])(
    '%p is not accepted',
    (header) => {
      expect(classifyContentType(header)).toBeUndefined();
    },
  );
});
