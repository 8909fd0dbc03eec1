// The floor: a bare express 5 app that parses the body and answers 202. Nothing on the same
// stack can be faster, so every gateway number is read as a ratio to this one.
import express from 'express';
import type { AddressInfo } from 'node:net';

const app = express();
app.use(express.json({ limit: '10mb' }));
app.use(express.urlencoded({ extended: false, limit: '10mb' }));
app.use(express.raw({ type: 'multipart/form-data', limit: '10mb' }));
app.post('*path', (_req, res) => {
  res.status(202).json({ ok: true });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
