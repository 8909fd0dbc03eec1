// The least a batching receiver does: node:http without express, the body parsed, and per
// event-loop turn one pipeline of `SET NX` (one write to Redis) and one Produce request of the
// fresh events (one in flight, acks from all replicas), each answered 202 once its record is
// written. No authentication, rate limit, delivery log, access log, metrics or CloudEvent: what
// it costs per request is the least the gateway's work can cost on ioredis and kafkajs, and so
// shows how far below the naive receiver a batching gateway on this stack can go.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { Kafka, logLevel, Partitioners } from 'kafkajs';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
const kafka = new Kafka({ clientId: 'batched', brokers: (process.env.KAFKA_BROKERS ?? '').split(','), logLevel: logLevel.NOTHING });
const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
const prefix = process.env.REDIS_PREFIX ?? 'batched:';
const topic = process.env.TOPIC_TRIGGERS ?? 'workflow.triggers';
const ACCEPTED = JSON.stringify({ ok: true });

interface Pending {
  key: string;
  value: string;
  res: ServerResponse;
}

let turn: Pending[] = [];
let toProduce: Pending[] = [];
let producing = false;

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function claimTurn(): Promise<void> {
  const batch = turn;
  turn = [];
  const pipeline = redis.pipeline();
  for (const p of batch) pipeline.set(`${prefix}${p.key}`, '1', 'EX', 86_400, 'NX');
  const results = await pipeline.exec().catch(() => null);
  if (!results) {
    for (const p of batch) answer(p.res, 503, JSON.stringify({ error: 'unavailable' }));
    return;
  }
  batch.forEach((p, i) => {
    if (results[i]?.[1] === 'OK') toProduce.push(p);
    else answer(p.res, 200, JSON.stringify({ duplicate: true }));
  });
  void produce();
}

async function produce(): Promise<void> {
  if (producing || toProduce.length === 0) return;
  producing = true;
  const batch = toProduce;
  toProduce = [];
  try {
    await producer.send({ topic, acks: -1, messages: batch.map((p) => ({ key: 'wf-bench', value: p.value })) });
    for (const p of batch) answer(p.res, 202, ACCEPTED);
  } catch {
    await redis.del(...batch.map((p) => `${prefix}${p.key}`)).catch(() => undefined);
    for (const p of batch) answer(p.res, 503, JSON.stringify({ error: 'unavailable' }));
  }
  producing = false;
  void produce();
}

function receive(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') return answer(res, 405, '{}');
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let value: string;
    try {
      value = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      return answer(res, 400, '{}');
    }
    const key = (req.headers['idempotency-key'] as string | undefined) ?? String(Math.random());
    if (turn.length === 0) setImmediate(() => void claimTurn());
    turn.push({ key, value, res });
  });
}

producer.connect().then(() => {
  const server = createServer(receive).listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    console.log(JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port }));
  });
  process.on('SIGTERM', () => server.close(() => void producer.disconnect().then(() => process.exit(0))));
});
