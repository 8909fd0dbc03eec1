import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { FileStore } from './file-store';
import { S3FileStore, type S3FileStoreOptions } from './s3';

/** The file store's section of the settings (the container builds it from S3_* and PUBLISH_TIMEOUT_MS). */
export type FileStoreSettings = Omit<S3FileStoreOptions, 'logger' | 'metrics'>;

/** S3 when the settings name a bucket; otherwise none (files stay inline, contract §2.5). */
export function fileStoreFor(settings: FileStoreSettings | undefined, logger: Logger, metrics: Metrics): FileStore | undefined {
  return settings && new S3FileStore({ ...settings, logger, metrics });
}
