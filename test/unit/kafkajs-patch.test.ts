/**
 * patches/kafkajs+2.2.4.patch (applied by npm's postinstall) changes how kafkajs encodes a
 * Produce request: encoders not zero-filled, varints written in place, headers and records
 * sized to fit, CRC-32C eight bytes a step; the default partitioner's murmur2 in 32-bit integer
 * arithmetic; no pending-request check scheduled when nothing is pending (it looped every 1 ms);
 * a batch's messages grouped by partition in one pass (the reduce copied each partition's array
 * once per message added to it).
 * The bytes on the wire, and the partition a key goes to, must not change. The Kafka
 * integration tests check the CRCs with librdkafka's own code (kcat's check.crcs); these check
 * the patched functions against independent references and the unpatched library's output.
 */
import { createHash, randomBytes } from 'node:crypto';
import { waitUntil } from '../helpers/wait';

// kafkajs's protocol modules ship no types: required, and typed here as far as used.
type EncoderLike = { buf: Buffer; buffer: Buffer; writeVarInt(v: number): EncoderLike; writeVarLong(v: number | bigint): EncoderLike };
const Encoder = require('kafkajs/src/protocol/encoder') as new (size?: number) => EncoderLike;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => { readVarInt(): number; readVarLong(): { toString(): string } };
const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C') as (buffer: Buffer) => number;
const Header = require('kafkajs/src/protocol/recordBatch/header/v0') as (header: { key: string; value: string | Buffer }) => EncoderLike;
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (record: object) => EncoderLike;
const murmur2 = require('kafkajs/src/producer/partitioners/default/murmur2') as (key: string | Buffer) => number;
type Queue = {
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  push(request: { entry: { correlationId: number; resolve(): void; reject(): void }; expectResponse: boolean; sendRequest(): void }): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  maybeThrottle(ms: number): void;
  destroy(): void;
};
const RequestQueue = require('kafkajs/src/network/requestQueue') as new (options: object) => Queue;
type Message = { key: string; value: string };
const groupMessagesPerPartition = require('kafkajs/src/producer/groupMessagesPerPartition') as (args: {
  topic: string;
  partitionMetadata: Array<{ partitionId: number }>;
  messages: Message[];
  partitioner: (args: { topic: string; partitionMetadata: unknown[]; message: Message }) => number;
}) => Record<number, Message[]>;
const ProduceV3 = require('kafkajs/src/protocol/requests/produce/v3/request') as (request: object) => { encode(): Promise<EncoderLike> };

/** CRC-32C bit by bit, straight from the reflected polynomial (RFC 3720 §12.1). */
function referenceCrc32C(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** Kafka's murmur2 (Utils.murmur2 in the Java client) in 64-bit BigInts cut to 32 bits at each step, as Java's int does. */
function referenceMurmur2(bytes: Buffer): number {
  const int = (value: bigint) => BigInt.asIntN(32, value);
  const m = 0x5bd1e995n;
  let h = int(0x9747b28cn ^ BigInt(bytes.length));
  const whole = bytes.length - (bytes.length % 4);
  for (let i = 0; i < whole; i += 4) {
    let k = int(BigInt(bytes.readInt32LE(i)) * m);
    k = int(k ^ (BigInt.asUintN(32, k) >> 24n));
    k = int(k * m);
    h = int(int(h * m) ^ k);
  }
  const tail = bytes.length % 4;
  if (tail >= 3) h = int(h ^ (BigInt(bytes[whole + 2]) << 16n));
  if (tail >= 2) h = int(h ^ (BigInt(bytes[whole + 1]) << 8n));
  if (tail >= 1) h = int(int(h ^ BigInt(bytes[whole])) * m);
  h = int(h ^ (BigInt.asUintN(32, h) >> 13n));
  h = int(h * m);
  h = int(h ^ (BigInt.asUintN(32, h) >> 15n));
  return Number(h);
}

/** Kafka's varint and varlong: zig-zag, then unsigned LEB128 (KIP-98's record format). */
function referenceVarLong(value: bigint): Buffer {
  let zigzag = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  const out: number[] = [];
  while (zigzag >= 0x80n) {
    out.push(Number(zigzag & 0x7fn) | 0x80);
    zigzag >>= 7n;
  }
  out.push(Number(zigzag));
  return Buffer.from(out);
}

describe('kafkajs, patched: the same bytes, made with less work', () => {
  it('is the patched kafkajs (a header encoder is sized to the header, not 512 bytes)', () => {
    expect(Header({ key: 'ce_type', value: 'webhook.trigger' }).buf.length).toBeLessThanOrEqual(64);
  });

  it.each([
    ['32 bytes of zeros', Buffer.alloc(32), 0x8a9136aa],
    ['32 bytes of 0xff', Buffer.alloc(32, 0xff), 0x62a8ab43],
    ['32 ascending bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e],
    ['32 descending bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c],
    ['"123456789"', Buffer.from('123456789'), 0xe3069283],
  ])('CRC-32C of %s is the published check value', (_name, bytes, expected) => {
    expect(crc32C(bytes)).toBe(expected);
  });

  it('CRC-32C agrees with the bit-by-bit reference for every length up to 70, odd offsets, and 64 KiB', () => {
    const pool = randomBytes(70_000);
    for (let length = 0; length <= 70; length++) {
      const slice = pool.subarray(length, length * 2); // a view at an odd offset as often as not
      expect(crc32C(slice)).toBe(referenceCrc32C(slice));
    }
    const large = pool.subarray(3, 3 + 65_536);
    expect(crc32C(large)).toBe(referenceCrc32C(large));
  });

  it.each([0, 1, -1, 63, -64, 64, -65, 8191, 8192, 2 ** 20, 2 ** 31 - 1, -(2 ** 31)])('varint %d: the record format\'s bytes, read back by kafkajs', (value) => {
    const bytes = new Encoder().writeVarInt(value).buffer;
    expect(bytes).toEqual(referenceVarLong(BigInt(value)));
    expect(new Decoder(bytes).readVarInt()).toBe(value);
  });

  it.each(['0', '-1', '1764700000000', '-1764700000000', '9007199254740991', '-9007199254740991'])('varlong %s: the record format\'s bytes, read back by kafkajs', (text) => {
    const bytes = new Encoder().writeVarLong(Number(text)).buffer;
    expect(bytes).toEqual(referenceVarLong(BigInt(text)));
    expect(new Decoder(bytes).readVarLong().toString()).toBe(text);
  });

  it('a record longer than the default 512-byte encoder keeps every byte, and its length prefix says how many', () => {
    const value = 'é'.repeat(3000);
    const record = Record({ key: 'k', value, headers: { a: 'b' } }).buffer;
    const length = new Decoder(record).readVarInt();
    expect(length).toBeGreaterThan(6000);
    expect(record.length).toBe(2 + length); // its length prefix, a varint of 2 bytes, then the body
    expect(record.includes(Buffer.from(value))).toBe(true);
    expect([...record.subarray(-4)]).toEqual([2, 0x61, 2, 0x62]); // the one header: varint 1, "a", varint 1, "b"
  });

  /**
   * Two topics, three partitions, records with and without keys, string and Buffer values
   * from 0 to 3 KB of multi-byte UTF-8, repeated and binary headers. The digest is what the
   * unpatched kafkajs 2.2.4 (from the npm registry) encodes for it, recorded before the patch.
   */
  it('a Produce request is byte for byte what the unpatched kafkajs 2.2.4 encodes', async () => {
    const messages = (partition: number) =>
      Array.from({ length: 40 }, (_, i) => ({
        key: i % 7 === 0 ? null : `key-${partition}-${i}`,
        value: i % 5 === 0 ? Buffer.alloc(i * 29, i) : `{"n":${i},"text":"${'é€'.repeat(i * 23)}"}`,
        headers: {
          'content-type': 'application/cloudevents+json',
          ce_id: `id-${partition}-${i}`,
          ...(i % 3 === 0 && { repeated: ['a', 'b'] }),
          bytes: Buffer.from([i, 255, 0]),
        },
        timestamp: 1764700000000 + i * 1000 + partition,
      }));
    const request = ProduceV3({
      acks: -1,
      timeout: 5000,
      topicData: [
        {
          topic: 'workflow.triggers',
          partitions: [
            { partition: 0, firstSequence: 0, messages: messages(0) },
            { partition: 3, firstSequence: 7, messages: messages(3) },
          ],
        },
        { topic: 'chat.inbound', partitions: [{ partition: 1, firstSequence: 0, messages: messages(1).slice(0, 3) }] },
      ],
    });
    const bytes = (await request.encode()).buffer;
    expect(bytes.length).toBe(164_616);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe('ac9ccabb2a500cbf2f4a52d91ed1a01f5fd013a2b876000635884e2dd4d93244');
  });

  it.each([
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
    ['', 275646681],
  ])('murmur2 of %j is the Java client\'s (Apache Kafka UtilsTest.testMurmur2)', (key, expected) => {
    expect(murmur2(key)).toBe(expected);
    expect(murmur2(Buffer.from(key))).toBe(expected);
  });

  it('murmur2 agrees with a BigInt reference for every length up to 70 and for multi-byte keys', () => {
    const pool = randomBytes(70_000);
    for (let length = 0; length <= 70; length++) {
      const key = pool.subarray(length * 7, length * 8);
      expect(murmur2(key)).toBe(referenceMurmur2(key));
    }
    for (const text of ['ключ-идемпотентности', '冪等キー/😀', 'é'.repeat(33)]) expect(murmur2(text)).toBe(referenceMurmur2(Buffer.from(text)));
  });

  it('is the patched murmur2 (no 64-bit Long per step)', () => {
    expect(murmur2.toString()).toContain('Math.imul');
  });

  it('a request queue with nothing pending schedules no check (unpatched: one every millisecond, for good)', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const quiet = () => undefined;
    const queue = new RequestQueue({ maxInFlightRequests: 1, requestTimeout: 30_000, clientId: 'test', broker: 'test:9092', logger: { debug: quiet, info: quiet, warn: quiet, error: quiet } });
    const sent: number[] = [];
    const request = (correlationId: number) => ({ entry: { correlationId, resolve: quiet, reject: quiet }, expectResponse: true, sendRequest: () => sent.push(correlationId) });
    const answer = (correlationId: number) => queue.fulfillRequest({ correlationId, payload: Buffer.alloc(0), size: 0 });
    try {
      queue.push(request(1));
      queue.push(request(2)); // one in flight at most: it waits, and a check is scheduled
      expect(sent).toEqual([1]);
      answer(1);
      expect(sent).toEqual([1, 2]);
      answer(2);
      await waitUntil(() => queue.throttleCheckTimeoutId === null, 'the pending check to end with nothing left to check');
      // Throttled by the broker: a request waits for the throttle's end, then the checks stop again.
      queue.maybeThrottle(30);
      queue.push(request(3));
      expect(sent).toEqual([1, 2]);
      await waitUntil(() => sent.length === 3, 'the throttled request to go once the throttle is over');
      answer(3);
      await waitUntil(() => queue.throttleCheckTimeoutId === null, 'the checks to stop after the throttle');
      expect(warnings.map((w) => w.name)).not.toContain('TimeoutNegativeWarning');
    } finally {
      queue.destroy();
      process.off('warning', onWarning);
    }
  });

  it("groups a batch's messages by partition in their order, as a filter per partition would", () => {
    const partitionMetadata = [0, 1, 2, 3].map((partitionId) => ({ partitionId }));
    // 20,000 messages (the unpatched reduce copied a partition's array for each one), none to partition 3.
    const messages = Array.from({ length: 20_000 }, (_, i) => ({ key: `k-${i}`, value: String(i % 7) }));
    const partitionOf = (message: Message) => Number(message.value) % 3;
    const partitioner = ({ topic, message }: { topic: string; message: Message }) => {
      expect(topic).toBe('t');
      return partitionOf(message);
    };
    const grouped = groupMessagesPerPartition({ topic: 't', partitionMetadata, messages, partitioner });
    expect(Object.keys(grouped)).toEqual(['0', '1', '2']);
    for (const partition of [0, 1, 2]) expect(grouped[partition]).toEqual(messages.filter((message) => partitionOf(message) === partition));
    expect(groupMessagesPerPartition({ topic: 't', partitionMetadata: [], messages, partitioner })).toEqual({});
    expect(groupMessagesPerPartition({ topic: 't', partitionMetadata, messages: [], partitioner })).toEqual({});
  });

  it('is the patched grouping (one pass, no messages.reduce)', () => {
    expect(groupMessagesPerPartition.toString()).not.toContain('messages.reduce(');
  });
});
