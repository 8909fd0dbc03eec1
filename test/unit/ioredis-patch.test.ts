/**
 * patches/ioredis+6.0.0.patch (applied by npm's postinstall) rewrites ioredis's RESP decoder
 * mechanically: its private fields and methods, which TypeScript compiled to a WeakMap or
 * WeakSet lookup on every access, are plain properties and functions. What it decodes must not
 * change: these feed it replies of every RESP2 and RESP3 type, whole and cut at every byte,
 * and compare with what the protocol says they are. The Redis integration tests run every
 * command of the gateway through it.
 */
type DecoderConfig = {
  getTypeMapping(): Record<number, unknown>;
  onReply(reply: unknown): void;
  onErrorReply(error: Error): void;
  onPush(reply: unknown): void;
};
const { Decoder, RESP_TYPES } = require('ioredis/built/resp/decoder') as {
  Decoder: new (config: DecoderConfig) => { write(chunk: Buffer): void };
  RESP_TYPES: Record<string, number>;
};

/** What the decoder handed on, in order: ['reply', value], ['error', message] or ['push', value]. */
function decode(chunks: Buffer[], typeMapping: Record<number, unknown> = {}): unknown[] {
  const out: unknown[] = [];
  const decoder = new Decoder({
    getTypeMapping: () => typeMapping,
    onReply: (reply) => out.push(['reply', reply]),
    onErrorReply: (error) => out.push(['error', error.message]),
    onPush: (reply) => out.push(['push', reply]),
  });
  for (const chunk of chunks) decoder.write(chunk);
  return out;
}

/** The stream whole, then cut once at every byte (every 997th of a long one), then a byte a chunk. */
function cuts(wire: Buffer): Buffer[][] {
  const ways: Buffer[][] = [[wire]];
  const step = wire.length > 1000 ? 997 : 1;
  for (let at = 1; at < wire.length; at += step) ways.push([wire.subarray(0, at), wire.subarray(at)]);
  ways.push([...wire].map((byte) => Buffer.from([byte])));
  return ways;
}

/** Longer than a socket read's 64 KiB: arrives in pieces. */
const long = 'x'.repeat(70_000);
/** Wire bytes and what they decode to with no type mapping (strings, numbers, objects; a push's blob strings are Buffers). */
const REPLIES: Array<[wire: string, decoded: unknown[]]> = [
  ['+OK\r\n', [['reply', 'OK']]],
  ['-ERR wrong number of arguments\r\n', [['error', 'ERR wrong number of arguments']]],
  [':123\r\n:-5\r\n:0\r\n', [['reply', 123], ['reply', -5], ['reply', 0]]],
  ['$5\r\nhello\r\n$0\r\n\r\n$-1\r\n', [['reply', 'hello'], ['reply', ''], ['reply', null]]],
  [`$${long.length}\r\n${long}\r\n`, [['reply', long]]],
  ['$7\r\nclaimed\r\n$3\r\né!\r\n', [['reply', 'claimed'], ['reply', 'é!']]],
  ['*3\r\n:1\r\n$3\r\nabc\r\n*-1\r\n*0\r\n', [['reply', [1, 'abc', null]], ['reply', []]]],
  ['*2\r\n*2\r\n:17\r\n:59123\r\n*1\r\n+x\r\n', [['reply', [[17, 59123], ['x']]]]],
  ['*2\r\n-ERR one\r\n:2\r\n', [['reply', [new Error('ERR one'), 2]]]],
  ['_\r\n#t\r\n#f\r\n', [['reply', null], ['reply', true], ['reply', false]]],
  [',3.25\r\n,-1.5e2\r\n,10\r\n,inf\r\n,-inf\r\n', [['reply', 3.25], ['reply', -150], ['reply', 10], ['reply', Infinity], ['reply', -Infinity]]],
  ['(12345678901234567890\r\n(-3\r\n', [['reply', 12345678901234567890n], ['reply', -3n]]],
  ['~2\r\n:1\r\n+b\r\n', [['reply', [1, 'b']]]],
  ['%2\r\n+k\r\n:1\r\n$2\r\nk2\r\n*1\r\n:2\r\n', [['reply', { k: 1, k2: [2] }]]],
  ['=15\r\ntxt:Some string\r\n', [['reply', 'Some string']]],
  ['!9\r\nERR blobs\r\n', [['error', 'ERR blobs']]],
  ['>2\r\n+message\r\n$1\r\nx\r\n:7\r\n', [['push', ['message', Buffer.from('x')]], ['reply', 7]]],
];

describe('ioredis RESP decoder, patched', () => {
  it('keeps its state in plain properties (the patch is applied)', () => {
    const decoder = new Decoder({ getTypeMapping: () => ({}), onReply() {}, onErrorReply() {}, onPush() {} });
    expect(Object.keys(decoder)).toEqual(expect.arrayContaining(['_cursor', '_next', '_pushTypeMapping']));
  });

  it.each(REPLIES.map(([wire, decoded]) => [JSON.stringify(wire.slice(0, 40)), wire, decoded]))('decodes %s whole and cut at every byte', (_name, wire, decoded) => {
    for (const chunks of cuts(Buffer.from(wire as string))) expect(decode(chunks)).toEqual(decoded);
  });

  it('decodes strings as Buffers, maps and sets as arrays, where the type mapping says so (ioredis\'s legacy mapping)', () => {
    const mapping = {
      [RESP_TYPES.SIMPLE_STRING]: Buffer,
      [RESP_TYPES.BLOB_STRING]: Buffer,
      [RESP_TYPES.BIG_NUMBER]: String,
      [RESP_TYPES.DOUBLE]: Buffer,
      [RESP_TYPES.BOOLEAN]: Number,
      [RESP_TYPES.MAP]: Array,
      [RESP_TYPES.SET]: Array,
    };
    const wire = Buffer.from('+OK\r\n$3\r\nabc\r\n(99\r\n,1.5\r\n#t\r\n%1\r\n+k\r\n:1\r\n~1\r\n:2\r\n');
    for (const chunks of cuts(wire)) {
      expect(decode(chunks, mapping)).toEqual([
        ['reply', Buffer.from('OK')],
        ['reply', Buffer.from('abc')],
        ['reply', '99'],
        ['reply', Buffer.from('1.5')],
        ['reply', 1],
        ['reply', [Buffer.from('k'), 1]],
        ['reply', [2]],
      ]);
    }
  });
});
