// The naive receiver: what a team writes by hand. One `SET NX` and one `producer.send()` per
// request, nothing batched. Same broker, same Redis, same acks as the gateway.
import express from 'express';
import { Redis } from 'ioredis';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import type { AddressInfo } from 'node:net';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
const kafka = new Kafka({ clientId: 'naive', brokers: (process.env.KAFKA_BROKERS ?? '').split(','), logLevel: logLevel.NOTHING });
const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
const prefix = process.env.REDIS_PREFIX ?? 'naive:';
const topic = process.env.TOPIC_TRIGGERS ?? 'workflow.triggers';
let produceRequests = 0;
let records = 0;
producer.on(producer.events.REQUEST, (event) => {
  if (event.payload.apiName === 'Produce') produceRequests++;
});

const app = express();
app.use(express.json({ limit: '10mb' }));
app.use(express.urlencoded({ extended: false, limit: '10mb' }));
app.use(express.raw({ type: 'multipart/form-data', limit: '10mb' }));
app.get('/stats', (_req, res) => {
  res.json({ produceRequests, records });
});
app.post('*path', async (req, res) => {
  const key = req.get('idempotency-key') ?? req.get('x-hub-signature-256') ?? String(Math.random());
  const fresh = await redis.set(`${prefix}${key}`, '1', 'EX', 86_400, 'NX');
  if (!fresh) {
    res.status(200).json({ duplicate: true });
    return;
  }
  try {
    const value = Buffer.isBuffer(req.body) ? req.body : JSON.stringify(req.body);
    await producer.send({ topic, acks: -1, messages: [{ key: 'wf-bench', value }] });
    records++;
    res.status(202).json({ ok: true });
  } catch {
    await redis.del(`${prefix}${key}`);
    res.status(503).json({ error: 'unavailable' });
  }
});

producer.connect().then(() => {
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    console.log(JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port }));
  });
  process.on('SIGTERM', () => server.close(() => void producer.disconnect().then(() => process.exit(0))));
});
