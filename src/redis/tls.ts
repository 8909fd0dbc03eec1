import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

export interface RedisTlsSettings {
  REDIS_URL?: string;
  REDIS_CLUSTER_NODES?: string[];
  REDIS_TLS_CA_FILE?: string;
  REDIS_TLS_CERT_FILE?: string;
  REDIS_TLS_KEY_FILE?: string;
}

/**
 * TLS options for a rediss:// URL or rediss:// cluster nodes (undefined without TLS). Without REDIS_TLS_CA_FILE the
 * server's certificate is checked against the system's CAs, as managed Redis services need;
 * the certificate is always verified. A client certificate is sent when the server asks for
 * one (Redis's own `tls-auth-clients yes`, its default).
 */
export function redisTlsOptions(settings: RedisTlsSettings): ConnectionOptions | undefined {
  const tls = settings.REDIS_URL?.startsWith('rediss://') || settings.REDIS_CLUSTER_NODES?.[0]?.startsWith('rediss://');
  if (!tls) return undefined;
  return {
    rejectUnauthorized: true,
    ...(settings.REDIS_TLS_CA_FILE && { ca: readFileSync(settings.REDIS_TLS_CA_FILE) }),
    ...(settings.REDIS_TLS_CERT_FILE && { cert: readFileSync(settings.REDIS_TLS_CERT_FILE) }),
    ...(settings.REDIS_TLS_KEY_FILE && { key: readFileSync(settings.REDIS_TLS_KEY_FILE) }),
  };
}
