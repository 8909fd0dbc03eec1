/**
 * src/ingest/multipart-boundary.ts reads the boundary busboy reads: compared here with busboy's
 * own Content-Type parser (its private lib/utils, used only as the oracle of this test) on the
 * header forms it parses and refuses, and on many generated ones.
 */
import busboy from 'busboy';
import { multipartBoundary } from '../../src/ingest/multipart-boundary';

const busboyUtils = require('busboy/lib/utils') as { parseContentType(header: string): { params?: Record<string, string> } | undefined };
const busboysBoundary = (header: string) => busboyUtils.parseContentType(header)?.params?.boundary;

const FORMS = [
  'multipart/form-data; boundary=B',
  'multipart/form-data;boundary=B',
  'multipart/form-data ;\tboundary=B ',
  'MULTIPART/FORM-DATA; BOUNDARY=AbC',
  'multipart/form-data; Boundary="quoted boundary"',
  'multipart/form-data; boundary="----WebKitFormBoundary7MA4YWxkTrZu0gW"',
  'multipart/form-data; boundary=------------------------d74496d66958873e',
  'multipart/form-data; charset=utf-8; boundary=after-another',
  'multipart/form-data; boundary=first; boundary=second',
  'multipart/form-data; boundary="first"; BOUNDARY=second',
  'multipart/form-data; boundary="esc\\"aped"',
  'multipart/form-data; boundary="back\\\\slash"',
  'multipart/form-data; boundary="kept\\x"',
  'multipart/form-data; boundary=""',
  'multipart/form-data; boundary="é-latin1"',
  'multipart/form-data; boundary="Ā-beyond-latin1"',
  'multipart/form-data; boundary="unterminated',
  'multipart/form-data; boundary="ends-in-escape\\',
  'multipart/form-data; boundary="escaped-end\\"',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary',
  'multipart/form-data; =B',
  'multipart/form-data; boundary=a b',
  'multipart/form-data; boundary=a;',
  'multipart/form-data; boundary=a; ',
  'multipart/form-data boundary=B',
  'multipart/form-data;;boundary=B',
  'multipart/; boundary=B',
  '/form-data; boundary=B',
  'multipart; boundary=B',
  'multipart/form-data',
  'text/plain; boundary=B',
  'multipart/form-data; boundary=(parens)',
  'multipart/form-data; boundary="(parens) and: ?"',
  'multipart/form-data; boundary="tab\there"',
  '',
];

describe('multipartBoundary reads the boundary busboy reads', () => {
  it.each(FORMS.map((header) => [JSON.stringify(header), header]))('%s', (_shown, header) => {
    expect(multipartBoundary(header)).toBe(busboysBoundary(header));
  });

  it('and busboy delimits a body with that boundary', async () => {
    const named = FORMS.filter((form) => form.toLowerCase().startsWith('multipart/form-data') && multipartBoundary(form));
    expect(named.length).toBeGreaterThan(10);
    for (const header of named) {
      const boundary = multipartBoundary(header)!;
      const parser = busboy({ headers: { 'content-type': header } });
      const heard: string[] = [];
      parser.on('field', (name) => heard.push(name));
      parser.on('error', (error: Error) => heard.push(error.message));
      const closed = new Promise((resolve) => parser.on('close', resolve));
      parser.end(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${boundary}--\r\n`));
      await closed;
      expect([header, heard]).toEqual([header, ['a']]);
    }
  });

  it('on generated headers, parsed or refused', () => {
    // A fixed seed: the same headers on every run.
    let seed = 0x9e3779b9;
    const random = (n: number) => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
      return seed % n;
    };
    const pick = <T>(options: T[]) => options[random(options.length)];
    const spaces = ['', '', ' ', ' ', '\t', '\n'];
    const names = ['boundary', 'BOUNDARY', 'Boundary', 'charset', '', 'bound ary', 'boundary*'];
    const values = ['B', 'x-y_z', '"q"', '"a b"', '"\\""', '"\\\\"', '"\\x"', '""', '"open', '', '"é"', '"Ā"', '"\u0000"', '(p)', 'a"b', '"x\\'];
    let parsed = 0;
    const differing: string[] = [];
    for (let n = 0; n < 20_000; n++) {
      let header = pick(['multipart/form-data', 'Multipart/Form-Data', 'multipart/', 'multipart', '', 'text/plain', '/x']);
      const params = random(4);
      for (let i = 0; i < params; i++) {
        header += `${pick(spaces)}${pick([';', ';', ';', ';', ';', ',', ''])}${pick(spaces)}${pick(names)}${pick(['=', '=', '=', '=', ' =', ''])}${pick(values)}`;
      }
      header += pick(['', '', ' ', ';', '; ']);
      const expected = busboysBoundary(header);
      if (expected !== undefined) parsed++;
      if (multipartBoundary(header) !== expected) differing.push(header);
    }
    expect(differing).toEqual([]);
    // The generator reaches headers that name a boundary, not only refused ones.
    expect(parsed).toBeGreaterThan(100);
  });
});
