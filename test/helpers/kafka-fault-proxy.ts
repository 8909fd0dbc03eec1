/**
 * A Kafka-protocol proxy in front of librdkafka's mock cluster (test/helpers/kafka-mock.ts),
 * for the faults the mock cannot produce. Records still go to the mock and are read back by
 * its consumer; the proxy only answers what it must, with kafkajs' own protocol encoder and
 * decoder:
 *
 * - Metadata, answered by the proxy from the mock's own topic list (asked on a side
 *   connection), up to version 5, so a client's `allowAutoTopicCreation` reaches a broker
 *   that honours it (the mock speaks Metadata v2 only, which has no such flag, and creates
 *   every topic it is asked about). With `autoCreateTopics` the proxy behaves like a broker
 *   with `auto.create.topics.enable=true`; without it, like one with `false`. It names itself
 *   as the only broker and as the controller, so kafkajs' idempotent producer gets its
 *   producer id (the mock names a controller that does not exist).
 * - topic faults: a topic can be made to look missing (UNKNOWN_TOPIC_OR_PARTITION) or not
 *   authorized (TOPIC_AUTHORIZATION_FAILED), whatever the mock holds.
 * - Produce faults: the next N Produce requests (optionally: those touching one topic) are
 *   refused with an error code for every partition, without reaching the mock (a leader
 *   move, as NOT_LEADER_FOR_PARTITION).
 * - SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) with one user, and TLS, terminated here: the
 *   mock has neither.
 *
 * Every other request is forwarded unchanged on a connection of its own to the mock;
 * responses go back in request order.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';

// kafkajs' protocol primitives (JavaScript, untyped).
/* eslint-disable @typescript-eslint/no-require-imports */
const Encoder = require('kafkajs/src/protocol/encoder') as new () => KafkaEncoder;
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => KafkaDecoder;
const metadataV2Response = require('kafkajs/src/protocol/requests/metadata/v2/response') as {
  decode(data: Buffer): Promise<MockMetadata>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

interface KafkaEncoder {
  writeInt8(v: number): KafkaEncoder;
  writeInt16(v: number): KafkaEncoder;
  writeInt32(v: number): KafkaEncoder;
  writeInt64(v: number | bigint | string): KafkaEncoder;
  writeBoolean(v: boolean): KafkaEncoder;
  writeString(v: string | null): KafkaEncoder;
  writeBytes(v: Buffer | string | null): KafkaEncoder;
  writeBuffer(v: Buffer): KafkaEncoder;
  writeEncoder(e: KafkaEncoder): KafkaEncoder;
  size(): number;
  readonly buffer: Buffer;
}

interface KafkaDecoder {
  offset: number;
  readInt8(): number;
  readInt16(): number;
  readInt32(): number;
  readBoolean(): boolean;
  readString(): string | null;
  readBytes(): Buffer | null;
  readArray<T>(reader: (d: KafkaDecoder) => T): T[];
  canReadBytes(n: number): boolean;
}

interface MockMetadata {
  brokers: Array<{ nodeId: number; host: string; port: number; rack: string | null }>;
  clusterId: string | null;
  controllerId: number;
  topicMetadata: Array<{
    topicErrorCode: number;
    topic: string;
    isInternal: boolean;
    partitionMetadata: Array<{ partitionErrorCode: number; partitionId: number; leader: number; replicas: number[]; isr: number[] }>;
  }>;
}

const API = { Produce: 0, Metadata: 3, SaslHandshake: 17, ApiVersions: 18, SaslAuthenticate: 36 } as const;
export const KAFKA_ERROR = {
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  NOT_LEADER_FOR_PARTITION: 6,
  TOPIC_AUTHORIZATION_FAILED: 29,
  UNSUPPORTED_SASL_MECHANISM: 33,
  ILLEGAL_SASL_STATE: 34,
  SASL_AUTHENTICATION_FAILED: 58,
} as const;
const METADATA_MAX_VERSION = 5;

export type SaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export interface FaultProxyOptions {
  /** The mock's own address, `host:port`. */
  upstream: string;
  /** Like a broker's `auto.create.topics.enable` (honoured only when the client allows it). Default true. */
  autoCreateTopics?: boolean;
  /** Require SASL with this mechanism and user before any other request. */
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
  /** Serve TLS with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
}

export interface MetadataRequestSeen {
  version: number;
  /** null: every topic */
  topics: string[] | null;
  allowAutoTopicCreation: boolean;
}

export interface KafkaFaultProxy {
  /** `127.0.0.1:<port>` */
  readonly brokers: string;
  /** Makes a topic look missing or not authorized; undefined lifts it. */
  setTopicFault(topic: string, fault: 'missing' | 'unauthorized' | undefined): void;
  /** The next `count` Produce requests (touching `topic`, when given) get `errorCode` for every partition and never reach the mock. */
  refuseProduce(errorCode: number, count: number, topic?: string): void;
  readonly metadataRequests: MetadataRequestSeen[];
  /** Produce requests forwarded to the mock, and those refused here. */
  readonly produce: { forwarded: number; refused: number };
  /** SASL logins: the mechanism asked for and whether the credentials matched. */
  readonly logins: Array<{ mechanism: string; ok: boolean }>;
  /** Requests other than ApiVersions and SASL sent before authenticating (the connection is then closed). */
  readonly unauthenticatedRequests: number;
  /** The topics the mock holds, without creating any. */
  topicsOnBroker(): Promise<string[]>;
  /** Creates topics on the mock (it creates whatever a Metadata v2 request names). */
  createTopics(topics: string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startKafkaFaultProxy(options: FaultProxyOptions): Promise<KafkaFaultProxy> {
  const [upstreamHost, upstreamPort] = splitAddress(options.upstream);
  const autoCreate = options.autoCreateTopics ?? true;
  const topicFaults = new Map<string, 'missing' | 'unauthorized'>();
  const produceFaults: Array<{ errorCode: number; remaining: number; topic?: string }> = [];
  const metadataRequests: MetadataRequestSeen[] = [];
  const produce = { forwarded: 0, refused: 0 };
  const logins: Array<{ mechanism: string; ok: boolean }> = [];
  let unauthenticatedRequests = 0;
  const sockets = new Set<Socket>();
  const side = new SideConnection(upstreamHost, upstreamPort);
  let ownPort = 0;

  const onClient = (client: Socket) => {
    sockets.add(client);
    const upstream = connect(upstreamPort, upstreamHost);
    sockets.add(upstream);
    const slots: Array<{ data?: Buffer }> = [];
    const waitingUpstream = new Map<number, { slot: { data?: Buffer }; apiKey: number; apiVersion: number }>();
    let authenticated = !options.sasl;
    let sasl: SaslSession | undefined;
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);

    const flush = () => {
      while (slots.length > 0 && slots[0].data) client.write(slots.shift()!.data!);
    };
    const answer = (slot: { data?: Buffer }, correlationId: number, body: Buffer) => {
      slot.data = frame(new Encoder().writeInt32(correlationId).writeBuffer(body).buffer);
      flush();
    };

    readFrames(client, async (payload) => {
      const header = new Decoder(payload);
      const apiKey = header.readInt16();
      const apiVersion = header.readInt16();
      const correlationId = header.readInt32();
      header.readString(); // client id
      const body = payload.subarray(header.offset);
      const slot: { data?: Buffer } = {};
      slots.push(slot);

      if (!authenticated && apiKey !== API.ApiVersions && apiKey !== API.SaslHandshake && apiKey !== API.SaslAuthenticate) {
        unauthenticatedRequests++;
        close();
        return;
      }
      if (apiKey === API.SaslHandshake && options.sasl) {
        const mechanism = new Decoder(body).readString() ?? '';
        const known = mechanism === options.sasl.mechanism;
        if (known) sasl = new SaslSession(options.sasl);
        else logins.push({ mechanism, ok: false });
        answer(
          slot,
          correlationId,
          new Encoder()
            .writeInt16(known ? 0 : KAFKA_ERROR.UNSUPPORTED_SASL_MECHANISM)
            .writeInt32(1)
            .writeString(options.sasl.mechanism).buffer,
        );
        return;
      }
      if (apiKey === API.SaslAuthenticate && options.sasl) {
        const token = new Decoder(body).readBytes() ?? Buffer.alloc(0);
        const step = sasl ? sasl.step(token) : { error: KAFKA_ERROR.ILLEGAL_SASL_STATE, reply: Buffer.alloc(0), done: true, ok: false };
        if (step.done) {
          logins.push({ mechanism: options.sasl.mechanism, ok: step.ok });
          authenticated = step.ok;
        }
        const reply = new Encoder().writeInt16(step.error).writeString(step.error ? 'authentication failed' : null).writeBytes(step.reply);
        if (apiVersion >= 1) reply.writeInt64(0);
        answer(slot, correlationId, reply.buffer);
        return;
      }
      if (apiKey === API.Metadata) {
        const request = decodeMetadataRequest(body, apiVersion);
        metadataRequests.push(request);
        try {
          const metadata = await side.metadata(request, autoCreate, topicFaults);
          answer(slot, correlationId, encodeMetadata(metadata, apiVersion, ownPort));
        } catch {
          close();
        }
        return;
      }
      if (apiKey === API.Produce && apiVersion >= 3) {
        const request = decodeProduceRequest(body);
        const fault = produceFaults.find((f) => f.remaining > 0 && (!f.topic || request.some((t) => t.topic === f.topic)));
        if (fault) {
          fault.remaining--;
          produce.refused++;
          answer(slot, correlationId, encodeProduceRefusal(request, fault.errorCode, apiVersion));
          return;
        }
        produce.forwarded++;
      }
      waitingUpstream.set(correlationId, { slot, apiKey, apiVersion });
      upstream.write(frame(payload));
    });

    readFrames(upstream, async (payload) => {
      const decoder = new Decoder(payload);
      const correlationId = decoder.readInt32();
      const waiting = waitingUpstream.get(correlationId);
      if (!waiting) return;
      waitingUpstream.delete(correlationId);
      let body = payload.subarray(decoder.offset);
      if (waiting.apiKey === API.ApiVersions) body = patchApiVersions(body, waiting.apiVersion, Boolean(options.sasl));
      answer(waiting.slot, correlationId, body);
    });
  };

  const server: Server = options.tls ? createTlsServer(options.tls, onClient) : createServer(onClient);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  ownPort = (server.address() as { port: number }).port;
  let stopping: Promise<void> | undefined;

  return {
    brokers: `127.0.0.1:${ownPort}`,
    setTopicFault(topic, fault) {
      if (fault) topicFaults.set(topic, fault);
      else topicFaults.delete(topic);
    },
    refuseProduce(errorCode, count, topic) {
      produceFaults.push({ errorCode, remaining: count, topic });
    },
    metadataRequests,
    produce,
    logins,
    get unauthenticatedRequests() {
      return unauthenticatedRequests;
    },
    async topicsOnBroker() {
      const metadata = await side.raw(null);
      return metadata.topicMetadata.map((t) => t.topic).sort();
    },
    async createTopics(topics) {
      await side.raw(topics);
    },
    stop() {
      stopping ??= (async () => {
        for (const socket of sockets) socket.destroy();
        side.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return stopping;
    },
  };
}

/** Calls `onFrame` with each length-prefixed frame's payload, one at a time, in order. */
function readFrames(socket: Socket, onFrame: (payload: Buffer) => Promise<void>): void {
  let buffer = Buffer.alloc(0);
  let chain = Promise.resolve();
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 4) {
      const size = buffer.readInt32BE(0);
      if (buffer.length < 4 + size) break;
      const payload = buffer.subarray(4, 4 + size);
      buffer = buffer.subarray(4 + size);
      chain = chain.then(() => onFrame(payload)).catch(() => void socket.destroy());
    }
  });
}

function frame(payload: Buffer): Buffer {
  return new Encoder().writeInt32(payload.length).writeBuffer(payload).buffer;
}

function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(':');
  return [address.slice(0, colon), Number(address.slice(colon + 1))];
}

function decodeMetadataRequest(body: Buffer, version: number): MetadataRequestSeen {
  const decoder = new Decoder(body);
  const count = decoder.readInt32();
  const topics: string[] | null = count < 0 || (count === 0 && version === 0) ? null : [];
  for (let i = 0; i < count; i++) topics!.push(decoder.readString()!);
  const allowAutoTopicCreation = version >= 4 ? decoder.readBoolean() : true;
  return { version, topics, allowAutoTopicCreation };
}

/** Metadata v0–v5 response: the proxy as the only broker and the controller. */
function encodeMetadata(metadata: MockMetadata, version: number, port: number): Buffer {
  const nodeId = metadata.brokers[0]?.nodeId ?? 1;
  const out = new Encoder();
  if (version >= 3) out.writeInt32(0); // throttle_time_ms
  out.writeInt32(1).writeInt32(nodeId).writeString('127.0.0.1').writeInt32(port);
  if (version >= 1) out.writeString(null); // rack
  if (version >= 2) out.writeString(metadata.clusterId);
  if (version >= 1) out.writeInt32(nodeId); // controller
  out.writeInt32(metadata.topicMetadata.length);
  for (const topic of metadata.topicMetadata) {
    out.writeInt16(topic.topicErrorCode).writeString(topic.topic);
    if (version >= 1) out.writeBoolean(topic.isInternal);
    out.writeInt32(topic.partitionMetadata.length);
    for (const p of topic.partitionMetadata) {
      out.writeInt16(p.partitionErrorCode).writeInt32(p.partitionId).writeInt32(nodeId);
      out.writeInt32(1).writeInt32(nodeId); // replicas
      out.writeInt32(1).writeInt32(nodeId); // isr
      if (version >= 5) out.writeInt32(0); // offline replicas
    }
  }
  return out.buffer;
}

interface ProduceTopic {
  topic: string;
  partitions: number[];
}

/** The topics and partitions of a Produce request v3+ (the records are skipped). */
function decodeProduceRequest(body: Buffer): ProduceTopic[] {
  const decoder = new Decoder(body);
  decoder.readString(); // transactional id
  decoder.readInt16(); // acks
  decoder.readInt32(); // timeout
  return decoder.readArray((d) => ({
    topic: d.readString()!,
    partitions: d.readArray((p) => {
      const partition = p.readInt32();
      p.readBytes();
      return partition;
    }),
  }));
}

/** Produce response v3–v7 with `errorCode` for every partition of the request. */
function encodeProduceRefusal(request: ProduceTopic[], errorCode: number, version: number): Buffer {
  const out = new Encoder().writeInt32(request.length);
  for (const { topic, partitions } of request) {
    out.writeString(topic).writeInt32(partitions.length);
    for (const partition of partitions) {
      out.writeInt32(partition).writeInt16(errorCode).writeInt64(-1);
      out.writeInt64(-1); // log_append_time (v2+)
      if (version >= 5) out.writeInt64(-1); // log_start_offset
    }
  }
  return out.writeInt32(0).buffer; // throttle_time_ms
}

/** The mock's ApiVersions answer with Metadata up to v5 and, with SASL, the SASL requests. */
function patchApiVersions(body: Buffer, version: number, sasl: boolean): Buffer {
  const decoder = new Decoder(body);
  const errorCode = decoder.readInt16();
  const apis = decoder.readArray((d) => ({ apiKey: d.readInt16(), min: d.readInt16(), max: d.readInt16() }));
  const throttle = version >= 1 && decoder.canReadBytes(4) ? decoder.readInt32() : 0;
  const patched = apis.filter((a) => a.apiKey !== API.Metadata && a.apiKey !== API.SaslHandshake && a.apiKey !== API.SaslAuthenticate);
  patched.push({ apiKey: API.Metadata, min: 0, max: METADATA_MAX_VERSION });
  if (sasl) patched.push({ apiKey: API.SaslHandshake, min: 0, max: 1 }, { apiKey: API.SaslAuthenticate, min: 0, max: 1 });
  const out = new Encoder().writeInt16(errorCode).writeInt32(patched.length);
  for (const a of patched) out.writeInt16(a.apiKey).writeInt16(a.min).writeInt16(a.max);
  if (version >= 1) out.writeInt32(throttle);
  return out.buffer;
}

/** The proxy's own connection to the mock, for its Metadata questions. */
class SideConnection {
  private socket?: Socket;
  private correlationId = 0;
  private readonly waiting = new Map<number, (payload: Buffer) => void>();

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** The mock's Metadata v2 for these topics (creating them) or for all (null). */
  async raw(topics: string[] | null): Promise<MockMetadata> {
    const body = new Encoder();
    if (topics === null) body.writeInt32(-1);
    else {
      body.writeInt32(topics.length);
      for (const topic of topics) body.writeString(topic);
    }
    const payload = await this.send(API.Metadata, 2, body.buffer);
    return metadataV2Response.decode(payload);
  }

  /** What a broker honouring allowAutoTopicCreation (and the topic faults) answers. */
  async metadata(
    request: MetadataRequestSeen,
    autoCreate: boolean,
    faults: ReadonlyMap<string, 'missing' | 'unauthorized'>,
  ): Promise<MockMetadata> {
    const all = await this.raw(null);
    if (request.topics === null) {
      return { ...all, topicMetadata: all.topicMetadata.filter((t) => !faults.has(t.topic)) };
    }
    const known = new Map(all.topicMetadata.map((t) => [t.topic, t]));
    const toCreate = request.topics.filter((t) => !known.has(t) && !faults.has(t) && autoCreate && request.allowAutoTopicCreation);
    if (toCreate.length > 0) for (const t of (await this.raw(toCreate)).topicMetadata) known.set(t.topic, t);
    return {
      ...all,
      topicMetadata: request.topics.map((topic) => {
        const fault = faults.get(topic);
        const found = known.get(topic);
        if (fault || !found) {
          const code = fault === 'unauthorized' ? KAFKA_ERROR.TOPIC_AUTHORIZATION_FAILED : KAFKA_ERROR.UNKNOWN_TOPIC_OR_PARTITION;
          return { topicErrorCode: code, topic, isInternal: false, partitionMetadata: [] };
        }
        return found;
      }),
    };
  }

  close(): void {
    this.socket?.destroy();
  }

  private send(apiKey: number, apiVersion: number, body: Buffer): Promise<Buffer> {
    if (!this.socket || this.socket.destroyed) {
      const socket = connect(this.port, this.host);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        for (const reject of this.waiting.values()) reject(Buffer.alloc(0));
        this.waiting.clear();
      });
      readFrames(socket, async (payload) => {
        const id = payload.readInt32BE(0);
        this.waiting.get(id)?.(payload.subarray(4));
        this.waiting.delete(id);
      });
      this.socket = socket;
    }
    const id = ++this.correlationId;
    const request = new Encoder().writeInt16(apiKey).writeInt16(apiVersion).writeInt32(id).writeString('fault-proxy').writeBuffer(body);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (payload) => (payload.length === 0 ? reject(new Error('mock connection closed')) : resolve(payload)));
      this.socket!.write(frame(request.buffer));
    });
  }
}

/** The server side of one SASL exchange (PLAIN: one step; SCRAM, RFC 5802: two). */
class SaslSession {
  private scram?: { clientFirstBare: string; serverFirst: string; nonce: string; salt: Buffer; iterations: number };

  constructor(private readonly user: { mechanism: SaslMechanism; username: string; password: string }) {}

  step(token: Buffer): { error: number; reply: Buffer; done: boolean; ok: boolean } {
    const fail = { error: KAFKA_ERROR.SASL_AUTHENTICATION_FAILED, reply: Buffer.alloc(0), done: true, ok: false };
    const text = token.toString('utf8');
    if (this.user.mechanism === 'PLAIN') {
      const [, username, password] = text.split('\u0000');
      const ok = username === this.user.username && password === this.user.password;
      return ok ? { error: 0, reply: Buffer.alloc(0), done: true, ok } : fail;
    }
    const digest = this.user.mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
    if (!this.scram) {
      const bare = text.replace(/^n,,/, '');
      const fields = parseScram(bare);
      if (fields.n !== this.user.username || !fields.r) return fail;
      const nonce = fields.r + randomBytes(12).toString('base64url');
      const salt = randomBytes(16);
      const serverFirst = `r=${nonce},s=${salt.toString('base64')},i=4096`;
      this.scram = { clientFirstBare: bare, serverFirst, nonce, salt, iterations: 4096 };
      return { error: 0, reply: Buffer.from(serverFirst), done: false, ok: false };
    }
    const fields = parseScram(text);
    const withoutProof = text.slice(0, text.lastIndexOf(',p='));
    if (fields.r !== this.scram.nonce || !fields.p) return fail;
    const salted = pbkdf2Sync(this.user.password, this.scram.salt, this.scram.iterations, digest === 'sha256' ? 32 : 64, digest);
    const clientKey = createHmac(digest, salted).update('Client Key').digest();
    const storedKey = createHash(digest).update(clientKey).digest();
    const authMessage = `${this.scram.clientFirstBare},${this.scram.serverFirst},${withoutProof}`;
    const signature = createHmac(digest, storedKey).update(authMessage).digest();
    const proof = Buffer.from(fields.p, 'base64');
    if (proof.length !== signature.length) return fail;
    const recovered = Buffer.from(proof.map((b, i) => b ^ signature[i]));
    const ok = timingSafeEqual(createHash(digest).update(recovered).digest(), storedKey);
    if (!ok) return fail;
    const serverKey = createHmac(digest, salted).update('Server Key').digest();
    const serverSignature = createHmac(digest, serverKey).update(authMessage).digest('base64');
    return { error: 0, reply: Buffer.from(`v=${serverSignature}`), done: true, ok: true };
  }
}

function parseScram(message: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of message.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return fields;
}
