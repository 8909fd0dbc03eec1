/**
 * deploy/k8s/networkpolicy.yaml, read as Kubernetes reads it: the admin port (8081) admits
 * only Prometheus's namespace and the operators' one; the pods reach DNS, Redis, Kafka and
 * public HTTPS, nothing else. The checks run a small evaluator of the NetworkPolicy rules the
 * file uses (matchLabels, ipBlock, ports); a construct it does not know fails the test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';

const k8s = (...parts: string[]) => join(__dirname, '..', '..', 'deploy', 'k8s', ...parts);
const read = (...parts: string[]) => readFileSync(k8s(...parts), 'utf8');
const policy = parseYaml(read('networkpolicy.yaml'));
const deployment = parseYaml(read('deployment.yaml'));
const configMap = parseYaml(read('configmap.yaml')).data as Record<string, string>;

type Labels = Record<string, string>;
/** A peer: a pod (its namespace and labels) or a bare address. */
type Peer = { namespace: string; namespaceLabels?: Labels; pod: Labels } | { ip: string };
type Rule = { from?: any[]; to?: any[]; ports?: Array<{ protocol?: string; port: number }> };

function matches(selector: any, labels: Labels): boolean {
  const known = new Set(['matchLabels']);
  for (const key of Object.keys(selector ?? {})) if (!known.has(key)) throw new Error(`evaluator does not know ${key}`);
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

function ipv4(address: string): number {
  return address.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
}

function inCidr(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(address) / size) === Math.floor(ipv4(base) / size);
}

function peerMatches(entry: any, peer: Peer): boolean {
  const known = new Set(['namespaceSelector', 'podSelector', 'ipBlock']);
  for (const key of Object.keys(entry)) if (!known.has(key)) throw new Error(`evaluator does not know ${key}`);
  if (entry.ipBlock) {
    // An ipBlock matches addresses; pods are matched by selectors here.
    return 'ip' in peer && inCidr(peer.ip, entry.ipBlock.cidr) && !(entry.ipBlock.except ?? []).some((cidr: string) => inCidr(peer.ip, cidr));
  }
  if ('ip' in peer) return false;
  const namespaceLabels = { 'kubernetes.io/metadata.name': peer.namespace, ...peer.namespaceLabels };
  // Without a namespaceSelector, a podSelector means pods of the policy's own namespace.
  const namespaceOk = entry.namespaceSelector ? matches(entry.namespaceSelector, namespaceLabels) : peer.namespace === 'ingress-gateway';
  return namespaceOk && (entry.podSelector ? matches(entry.podSelector, peer.pod) : true);
}

function allowed(rules: Rule[], side: 'from' | 'to', peer: Peer, port: number, protocol = 'TCP'): boolean {
  return rules.some((rule) => {
    const portOk = !rule.ports || rule.ports.some((p) => p.port === port && (p.protocol ?? 'TCP') === protocol);
    const peers = rule[side];
    return portOk && (!peers || peers.some((entry) => peerMatches(entry, peer)));
  });
}

const admits = (peer: Peer, port: number) => allowed(policy.spec.ingress, 'from', peer, port);
const reaches = (peer: Peer, port: number, protocol?: string) => allowed(policy.spec.egress, 'to', peer, port, protocol);

const anyPod = (namespace: string, pod: Labels = { app: 'anything' }, namespaceLabels?: Labels): Peer => ({ namespace, pod, namespaceLabels });

describe('the gateway\'s NetworkPolicy', () => {
  it('selects the gateway\'s pods, both ways, and kustomize applies it', () => {
    expect(policy.kind).toBe('NetworkPolicy');
    expect(matches(policy.spec.podSelector, deployment.spec.template.metadata.labels)).toBe(true);
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(parseYaml(read('kustomization.yaml')).resources).toContain('networkpolicy.yaml');
  });

  it('admits senders on the public port from anywhere', () => {
    expect(admits(anyPod('ingress-nginx'), 8080)).toBe(true);
    expect(admits({ ip: '203.0.113.7' }, 8080)).toBe(true);
  });

  it('admits the admin port only from the monitoring namespace and a namespace labelled for operators', () => {
    expect(admits(anyPod('monitoring', { 'app.kubernetes.io/name': 'prometheus' }), 8081)).toBe(true);
    expect(admits(anyPod('ops', {}, { 'ingress-gateway/admin-access': 'true' }), 8081)).toBe(true);
    for (const peer of [anyPod('default'), anyPod('ingress-nginx'), anyPod('ingress-gateway'), anyPod('ops'), { ip: '203.0.113.7' }, { ip: '10.1.2.3' }]) {
      expect(`${JSON.stringify(peer)}: ${admits(peer, 8081)}`).toBe(`${JSON.stringify(peer)}: false`);
    }
  });

  it('covers the ports the pods listen on, and nothing else', () => {
    const containerPorts = deployment.spec.template.spec.containers[0].ports.map((p: { containerPort: number }) => p.containerPort).sort();
    expect(containerPorts).toEqual([8080, 8081]);
    const ingressPorts = policy.spec.ingress.flatMap((rule: Rule) => (rule.ports ?? []).map((p) => p.port)).sort();
    expect(ingressPorts).toEqual(containerPorts);
    expect(policy.spec.ingress.every((rule: Rule) => rule.ports && rule.ports.length > 0)).toBe(true);
  });

  it('lets the pods resolve names through the cluster\'s DNS only', () => {
    const dns = anyPod('kube-system', { 'k8s-app': 'kube-dns' });
    expect(reaches(dns, 53, 'UDP')).toBe(true);
    expect(reaches(dns, 53, 'TCP')).toBe(true);
    expect(reaches({ ip: '8.8.8.8' }, 53, 'UDP')).toBe(false);
  });

  it('reaches Redis and the Kafka brokers where configmap.yaml points, on their ports', () => {
    const redisUrl = new URL(configMap.REDIS_URL);
    const redisNamespace = redisUrl.hostname.split('.')[1];
    const redisLabels = parseYaml(read('redis-access', 'networkpolicy.yaml')).spec.podSelector.matchLabels;
    expect(reaches(anyPod(redisNamespace, redisLabels), Number(redisUrl.port))).toBe(true);
    expect(reaches(anyPod(redisNamespace, redisLabels), 6380)).toBe(true);
    for (const broker of configMap.KAFKA_BROKERS.split(',')) {
      const [host, port] = broker.split(':');
      expect(reaches(anyPod(host.split('.')[2], { 'app.kubernetes.io/name': 'kafka' }), Number(port))).toBe(true);
    }
  });

  it('reaches nothing else inside the cluster or its network', () => {
    expect(reaches(anyPod('data', { 'app.kubernetes.io/name': 'postgresql' }), 5432)).toBe(false);
    expect(reaches(anyPod('data', { 'app.kubernetes.io/name': 'redis' }), 9092)).toBe(false);
    expect(reaches(anyPod('default'), 6379)).toBe(false);
    expect(reaches(anyPod('kube-system', { component: 'kube-apiserver' }), 443)).toBe(false);
    for (const ip of ['10.0.0.1', '172.20.0.10', '192.168.1.1', '169.254.169.254']) {
      expect(`${ip}: ${reaches({ ip }, 443)}`).toBe(`${ip}: false`);
    }
  });

  it('reaches public HTTPS (S3, STS, key servers) and an OTLP collector in monitoring', () => {
    expect(reaches({ ip: '52.216.0.1' }, 443)).toBe(true);
    expect(reaches({ ip: '52.216.0.1' }, 80)).toBe(false);
    expect(reaches(anyPod('monitoring', { 'app.kubernetes.io/name': 'opentelemetry-collector' }), 4318)).toBe(true);
  });

  it('is one document among the kustomization\'s, in the gateway\'s namespace', () => {
    const docs = parseAllDocuments(read('networkpolicy.yaml'));
    expect(docs).toHaveLength(1);
    expect(policy.metadata.namespace).toBeUndefined();
  });
});
