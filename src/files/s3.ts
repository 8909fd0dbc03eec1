import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { CleanupQueue } from './cleanup';
import { FileStoreError, type FileStore, type PutOptions, type StoredObject } from './file-store';
import { MIN_PART_BYTES, describe, uploadStream } from './s3-upload';

export interface S3FileStoreOptions {
  bucket: string;
  /** Put before every key (`uploads/`), or empty. */
  prefix: string;
  /** Unset: the SDK's chain (AWS_REGION, the profile). */
  region?: string;
  /** An S3-compatible store (MinIO, Ceph, R2…); unset: AWS. */
  endpoint?: string;
  forcePathStyle: boolean;
  /** Longest wait for one store call, SDK retries included. */
  timeoutMs: number;
  partBytes?: number;
  logger: Logger;
  metrics: Metrics;
}

/**
 * The file store on S3 or any S3-compatible store. Credentials come from the SDK's default
 * chain only (environment, web identity for a Kubernetes service account, instance or task
 * role): the gateway has no setting that holds one.
 */
export class S3FileStore implements FileStore {
  readonly name = 's3';
  readonly bufferBytes: number;
  private readonly client: S3Client;
  private readonly cleanup: CleanupQueue;
  private readonly partBytes: number;

  constructor(private readonly options: S3FileStoreOptions) {
    this.partBytes = Math.max(MIN_PART_BYTES, options.partBytes ?? MIN_PART_BYTES);
    // One part filling, one in flight, and the socket buffers around them.
    this.bufferBytes = 2 * this.partBytes + 1024 * 1024;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      followRegionRedirects: true,
      // The SDK's newer default (a CRC32 on every call) is not understood by every
      // S3-compatible store; the event carries the file's sha256 instead.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: Math.min(options.timeoutMs, 3000), requestTimeout: options.timeoutMs },
    });
    this.cleanup = new CleanupQueue({
      clean: (key) => this.clean(key),
      logger: options.logger,
      onPending: (count) => options.metrics.fileCleanupPending.set(count),
    });
  }

  async start(): Promise<void> {
    try {
      await this.client.config.region();
    } catch {
      throw new Error('S3_REGION is not set and the AWS SDK found no region (AWS_REGION): set one of them');
    }
  }

  async ping(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }), { abortSignal: AbortSignal.timeout(this.options.timeoutMs) });
      this.cleanup.kick();
    } catch (error) {
      this.options.metrics.fileStoreFailures.inc({ op: 'ping' });
      throw new Error(`s3: ${describe(error)}`);
    }
  }

  async close(): Promise<void> {
    await this.cleanup.close();
    this.client.destroy();
  }

  async put(key: string, body: Readable, options: PutOptions): Promise<StoredObject> {
    const { metrics } = this.options;
    const fullKey = this.fullKey(key);
    const started = performance.now();
    let size = 0;
    body.on('data', (chunk: Buffer) => (size += chunk.length));
    try {
      await uploadStream(this.client, { bucket: this.options.bucket, key: fullKey, contentType: options.contentType }, body, {
        partBytes: this.partBytes,
        signal: options.signal,
        timeoutMs: this.options.timeoutMs,
        memory: options.memory,
      });
    } catch (error) {
      // A put that failed half-way may still have left an object or parts (a reply lost).
      void this.cleanup.cleanNow([fullKey]);
      if (options.signal.aborted) throw options.signal.reason;
      if (error instanceof FileStoreError) {
        metrics.fileStoreFailures.inc({ op: 'put' });
        this.options.logger.warn({ err: error.message, op: error.op }, 'file store put failed');
      }
      throw error;
    }
    metrics.fileUploadSeconds.observe((performance.now() - started) / 1000);
    metrics.fileBytesStored.inc(size);
    metrics.fileObjects.inc({ op: 'stored' });
    this.cleanup.kick();
    return { url: `s3://${this.options.bucket}/${fullKey}`, key: fullKey };
  }

  async discard(keys: string[]): Promise<void> {
    await this.cleanup.cleanNow(keys);
  }

  /** Deletes the object and aborts any multipart upload still open under exactly this key. */
  private async clean(key: string): Promise<void> {
    const { bucket: Bucket, timeoutMs } = this.options;
    const call = () => ({ abortSignal: AbortSignal.timeout(timeoutMs) });
    try {
      const listed = await this.client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: key }), call());
      for (const upload of listed.Uploads ?? []) {
        if (upload.Key !== key) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: upload.UploadId }), call());
      }
      await this.client.send(new DeleteObjectCommand({ Bucket, Key: key }), call());
    } catch (error) {
      this.options.metrics.fileStoreFailures.inc({ op: 'clean' });
      throw new FileStoreError(`clean: ${describe(error)}`, 'clean');
    }
    this.options.metrics.fileObjects.inc({ op: 'cleaned' });
  }

  private fullKey(key: string): string {
    return `${this.options.prefix}${key}`;
  }
}
