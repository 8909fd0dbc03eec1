import type { Config } from '../config/schema';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { FileStore } from './file-store';
import { S3FileStore } from './s3';

/** S3 when S3_BUCKET is set; otherwise none (files stay inline, contract §2.5). */
export function fileStoreFor(config: Config, logger: Logger, metrics: Metrics): FileStore | undefined {
  if (!config.S3_BUCKET) return undefined;
  return new S3FileStore({
    bucket: config.S3_BUCKET,
    prefix: config.S3_PREFIX ?? '',
    region: config.S3_REGION,
    endpoint: config.S3_ENDPOINT,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    timeoutMs: config.PUBLISH_TIMEOUT_MS,
    logger,
    metrics,
  });
}
