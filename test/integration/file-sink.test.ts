/**
 * The embedded file sink on a real file system when the disk fills up, and the mode of the
 * files it creates. A full disk is made with RLIMIT_FSIZE, set on this test process for the
 * length of one write with util-linux's `prlimit`: a write across the limit is cut short and
 * the next one fails with EFBIG, as a write across the end of a full disk is cut short and the
 * next fails with ENOSPC. `/dev/full` stands for a disk with no room at all.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import { MicroBatcher } from '../../src/publish/batcher';
import { PublishError } from '../../src/publish/errors';
import { FileSink } from '../../src/publish/file';
import { PartialWriteError, type OutRecord } from '../../src/publish/sink';

function prlimit(args: string[]): string {
  try {
    return execFileSync('prlimit', args, { encoding: 'utf8' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('prlimit is not installed: it comes with util-linux (`apt-get install -y util-linux`).');
    }
    throw error;
  }
}

// A write past the limit also raises SIGXFSZ, whose default action ends this (jest worker)
// process. Node starts with it ignored, but jest's cache writes (write-file-atomic, through
// signal-exit) put it back to the default whenever a file was transformed first (a cold cache,
// as in CI: `jest --no-cache` ended the worker every time). A listener makes the write fail
// with EFBIG instead, as a full disk's ENOSPC. It must be on the real process: jest gives the
// test its own `process` object, on which a listener installs no signal handler at all. It is
// kept for the worker's life (removing it would restore the default action).
(runInThisContext('process') as NodeJS.Process).on('SIGXFSZ', () => undefined);

/** Runs `fn` with this process's file size limit (soft) at `bytes`, then puts the old one back. */
async function withFileSizeLimit<T>(bytes: number, fn: () => Promise<T>): Promise<T> {
  const pid = String(process.pid);
  const [soft, hard] = prlimit(['--pid', pid, '--fsize', '--raw', '--noheadings', '--output', 'SOFT,HARD']).trim().split(/\s+/);
  prlimit(['--pid', pid, `--fsize=${bytes}:${hard}`]);
  try {
    return await fn();
  } finally {
    prlimit(['--pid', pid, `--fsize=${soft}:${hard}`]);
  }
}

function record(topic: string, n: number, size = 200): OutRecord {
  const id = randomUUID();
  return {
    topic,
    key: 'wf-file',
    headers: { 'content-type': 'application/cloudevents+json', ce_id: id },
    value: JSON.stringify({ id, data: { n, pad: 'x'.repeat(size) } }),
  };
}

/** Every line of the file, parsed (a torn line fails the test); the ce_ids in order. */
async function idsIn(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8');
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { headers: { ce_id: string } }).headers.ce_id);
}

const ids = (records: OutRecord[]) => records.map((r) => r.headers.ce_id);

let dir: string;
let sink: FileSink;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'file-sink-'));
  sink = new FileSink({ dir: join(dir, 'events') });
  await sink.start();
});
afterEach(async () => {
  await sink.close();
  await rm(dir, { recursive: true, force: true });
});

test('an append cut short by a full disk is refused as unavailable and leaves no torn line; the next append is whole', async () => {
  const file = join(dir, 'events', 'full.ndjson');
  const first = [record('full', 1), record('full', 2)];
  await sink.write(first);
  const { size } = await stat(file);

  // Room for 100 more bytes: the batch's first write(2) is cut short there, the second fails.
  const refused = [record('full', 3), record('full', 4)];
  const outcome = await withFileSizeLimit(size + 100, () => sink.write(refused).then(() => 'acknowledged', (error: unknown) => error));
  expect(outcome).toBeInstanceOf(PublishError);
  expect(outcome).toMatchObject({ reason: 'unavailable', message: 'file sink: EFBIG' });
  // What was written of it is gone: the file holds exactly what was acknowledged.
  expect((await stat(file)).size).toBe(size);
  expect(await idsIn(file)).toEqual(ids(first));

  const after = [record('full', 5)];
  await sink.write(after);
  expect(await idsIn(file)).toEqual([...ids(first), ...ids(after)]);
});

test('through the batcher: the senders of the refused batch are told to send again, the next batch lands whole', async () => {
  const file = join(dir, 'events', 'batched.ndjson');
  const batcher = new MicroBatcher(sink, { maxRecords: 10, maxBytes: 1 << 20, lingerMs: 0, queueMax: 100, maxRecordBytes: 1 << 20 });
  await batcher.publish([record('batched', 0)], 5000);
  const { size } = await stat(file);
  const refused = [record('batched', 1, 400)];
  const outcome = await withFileSizeLimit(size + 50, () => batcher.publish(refused, 5000).then(() => 'acknowledged', (e: unknown) => e));
  expect(outcome).toMatchObject({ name: 'PublishError', reason: 'unavailable' });
  const next = [record('batched', 2)];
  await batcher.publish(next, 5000);
  const written = await idsIn(file);
  expect(written).toHaveLength(2);
  expect(written).not.toContain(refused[0].headers.ce_id);
  expect(written[1]).toBe(next[0].headers.ce_id);
  await batcher.close();
});

test('a topic whose file cannot take anything fails alone: the other topic of the batch is acknowledged', async () => {
  await symlink('/dev/full', join(dir, 'events', 'nospace.ndjson'));
  const records = [record('ok', 1), record('nospace', 1), record('ok', 2)];
  const error = await sink.write(records).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(PartialWriteError);
  const failures = (error as PartialWriteError).failures;
  expect([...failures.keys()]).toEqual([1]);
  expect(failures.get(1)).toMatchObject({ name: 'PublishError', reason: 'unavailable', message: 'file sink: ENOSPC' });
  expect(await idsIn(join(dir, 'events', 'ok.ndjson'))).toEqual([records[0].headers.ce_id, records[2].headers.ce_id]);
});

test('a torn last line left by a crash during an append is cut off when the file is next opened', async () => {
  const file = join(dir, 'events', 'crashed.ndjson');
  const whole = JSON.stringify({ topic: 'crashed', key: 'k', headers: { ce_id: 'before-crash' }, value: {} });
  await writeFile(file, `${whole}\n{"topic":"crashed","key":"k","hea`);
  const after = [record('crashed', 1)];
  await sink.write(after);
  expect(await idsIn(file)).toEqual(['before-crash', ...ids(after)]);
});

test('event files are created readable by the gateway user only (0600), in a folder of its own (0700)', async () => {
  const previous = process.umask(0); // the modes asked for, not what a umask leaves of them
  try {
    const own = new FileSink({ dir: join(dir, 'private', 'events') });
    await own.start();
    await own.write([record('modes', 1)]);
    await own.close();
    expect((await stat(join(dir, 'private', 'events', 'modes.ndjson'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'private', 'events'))).mode & 0o777).toBe(0o700);
  } finally {
    process.umask(previous);
  }
});

/** The open-file flags (fdinfo's octal `flags`) of this process's descriptors open on `path`. */
async function openFlags(path: string): Promise<number[]> {
  const flags: number[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
    if (target !== path) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8');
    flags.push(parseInt(/^flags:\s+([0-7]+)/m.exec(info)![1], 8));
  }
  return flags;
}

test('appends are synchronized writes (O_DSYNC): an append is on disk when it returns, as with write then fdatasync', async () => {
  const file = join(dir, 'events', 'synced.ndjson');
  await sink.write([record('synced', 1)]);
  const flags = await openFlags(file);
  expect(flags).toHaveLength(1);
  expect(flags[0] & constants.O_DSYNC).toBe(constants.O_DSYNC);
  expect(flags[0] & constants.O_APPEND).toBe(constants.O_APPEND);
});
