/** Where the Redis stores live: one Redis (a URL) or a Redis Cluster (seed nodes). */
export interface RedisClusterTarget {
  /** Seed nodes; the client discovers the others (CLUSTER SLOTS). */
  nodes: Array<{ host: string; port: number }>;
  username?: string;
  password?: string;
  tls: boolean;
}

export type RedisTarget = string | RedisClusterTarget;

export interface RedisTargetSettings {
  REDIS_URL?: string;
  REDIS_CLUSTER_NODES?: string[];
  REDIS_USERNAME?: string;
  REDIS_PASSWORD?: string;
}

/** The configured Redis, or undefined in embedded mode. */
export function redisTarget(settings: RedisTargetSettings): RedisTarget | undefined {
  if (settings.REDIS_URL) return settings.REDIS_URL;
  const nodes = settings.REDIS_CLUSTER_NODES;
  if (!nodes || nodes.length === 0) return undefined;
  return {
    nodes: nodes.map(parseNode),
    ...(settings.REDIS_USERNAME && { username: settings.REDIS_USERNAME }),
    ...(settings.REDIS_PASSWORD && { password: settings.REDIS_PASSWORD }),
    tls: nodes[0].startsWith('rediss://'),
  };
}

export function isCluster(target: RedisTarget): target is RedisClusterTarget {
  return typeof target !== 'string';
}

/** `host:port` or `redis[s]://host:port` (as the config schema accepts them). */
function parseNode(node: string): { host: string; port: number } {
  const hostPort = node.replace(/^rediss?:\/\//, '');
  const colon = hostPort.lastIndexOf(':');
  return { host: hostPort.slice(0, colon), port: Number(hostPort.slice(colon + 1)) };
}
