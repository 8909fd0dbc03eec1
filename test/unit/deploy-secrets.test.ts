/**
 * Issue 9 items 12 and 13 in the deployment files: no shipped manifest carries a usable
 * secret, the operator's secrets file is generated into the Secret and never committed, an
 * unedited copy of the example cannot start the gateway, Compose has no default admin token,
 * and Redis admits only the gateway's pods.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config/load';

const root = join(__dirname, '..', '..');
const deploy = (...parts: string[]) => join(root, 'deploy', ...parts);
const read = (...parts: string[]) => readFileSync(deploy(...parts), 'utf8');

/** KEY=VALUE lines of an env file, comments and blanks left out. */
function envLines(text: string): Array<[string, string]> {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
}

describe('k8s secrets', () => {
  it('no manifest is a Secret with values in it: the Secret is generated from the operator\'s file', () => {
    for (const file of readdirSync(deploy('k8s')).filter((name) => name.endsWith('.yaml'))) {
      expect(`${file}: ${/^kind:\s*Secret\s*$/m.test(read('k8s', file))}`).toBe(`${file}: false`);
    }
    const kustomization = read('k8s', 'kustomization.yaml');
    expect(kustomization).toMatch(/^secretGenerator:\n {2}- name: ingress-gateway\n {4}envs:\n {6}- secrets\.env$/m);
    expect(read('k8s', 'deployment.yaml')).toMatch(/secretRef:\n\s+name: ingress-gateway\n/);
  });

  it('the operator\'s secrets.env is git-ignored and not in the repository', () => {
    expect(read('k8s', '.gitignore').split('\n')).toContain('secrets.env');
    // Exits 0 only when git would ignore the file.
    execFileSync('git', ['check-ignore', '--quiet', '--no-index', 'deploy/k8s/secrets.env'], { cwd: root });
    const tracked = execFileSync('git', ['ls-files', 'deploy/k8s'], { cwd: root, encoding: 'utf8' }).split('\n');
    expect(tracked).not.toContain('deploy/k8s/secrets.env');
    expect(existsSync(deploy('k8s', 'secrets.env.example'))).toBe(true);
  });

  it('an unedited copy of secrets.env.example stops the gateway with one line per placeholder', () => {
    const example = envLines(read('k8s', 'secrets.env.example'));
    expect(example.map(([name]) => name)).toEqual(expect.arrayContaining(['ADMIN_TOKEN', 'SECRETS_KEY']));
    for (const [name, value] of example) {
      const result = loadConfig({ [name]: value });
      expect(`${name}: ${result.ok}`).toBe(`${name}: false`);
      if (!result.ok) expect(result.problems.some((line) => line.startsWith(`${name}:`))).toBe(true);
    }
  });

  it('the placeholder that k8s/secret.yaml used to ship is refused', () => {
    const result = loadConfig({ ADMIN_TOKEN: 'REPLACE-ME-with-a-long-random-token' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems).toEqual([expect.stringMatching(/^ADMIN_TOKEN: is a well-known placeholder/)]);
  });
});

describe('docker compose', () => {
  it('has no default admin token (change-me was refused at start) and says so', () => {
    const compose = read('docker-compose.yml');
    const adminToken = compose.match(/^\s+ADMIN_TOKEN:\s*(.*)$/m)?.[1];
    expect(adminToken).toBe('${ADMIN_TOKEN:-}');
    const readme = read('README.md');
    expect(readme).not.toMatch(/defaults to `change-me`/);
    expect(readme).toMatch(/`ADMIN_TOKEN` has no default/);
  });
});

describe('docker compose Redis', () => {
  it('keeps the registry across a restart: append-only file on, in a named volume at its data dir', () => {
    const compose = parseYaml(read('docker-compose.yml')) as any;
    const redis = compose.services.redis;
    const command: string[] = redis.command;
    expect(command[command.indexOf('--appendonly') + 1]).toBe('yes');
    const dataVolume = (redis.volumes as string[]).map((v) => v.split(':')).find(([, target]) => target === '/data');
    expect(dataVolume && dataVolume[0] in compose.volumes).toBe(true);
  });

  it('says it needs Compose v2 (the top-level name: is refused by docker-compose 1.x)', () => {
    expect((parseYaml(read('docker-compose.yml')) as any).name).toBe('ingress-gateway');
    expect(read('docker-compose.yml')).toMatch(/Needs Compose v2/);
    expect(read('README.md')).toMatch(/needs Compose v2/);
  });
});

describe('Redis NetworkPolicy', () => {
  const policy = read('k8s', 'redis-access', 'networkpolicy.yaml');
  const deployment = read('k8s', 'deployment.yaml');

  it('selects the Redis pods and admits only the gateway\'s pods, on the Redis ports', () => {
    expect(policy).toMatch(/^kind: NetworkPolicy$/m);
    expect(policy).toMatch(/^spec:\n(?:\s*#.*\n)*\s+podSelector:\n\s+matchLabels:\n\s+app\.kubernetes\.io\/name: redis\n/m);
    expect(policy).toMatch(/policyTypes:\n\s+- Ingress\n/);
    // One `from` entry holding both selectors (AND), not two entries (OR).
    const from = policy.slice(policy.indexOf('- from:'));
    expect(from).toMatch(/- namespaceSelector:\n\s+matchLabels:\n\s+kubernetes\.io\/metadata\.name: ingress-gateway\n\s+podSelector:\n\s+matchLabels:\n\s+app\.kubernetes\.io\/name: ingress-gateway\n/);
    expect(from.match(/^\s+- (namespaceSelector|podSelector|ipBlock):/gm)).toHaveLength(1);
    expect([...from.matchAll(/port: (\d+)/g)].map((m) => m[1])).toEqual(['6379', '6380']);
  });

  it('admits the labels the gateway\'s pods really carry', () => {
    const template = deployment.slice(deployment.indexOf('  template:'));
    expect(template).toMatch(/metadata:\n\s+labels:\n\s+app\.kubernetes\.io\/name: ingress-gateway\n/);
  });

  it('admits the namespace the gateway\'s kustomization really puts its pods in, and that namespace is created', () => {
    const kustomization = parseYaml(read('k8s', 'kustomization.yaml')) as { namespace?: string; resources: string[] };
    const manifests = kustomization.resources.flatMap((file) => parseAllDocuments(read('k8s', file)).map((doc) => doc.toJS()));
    const gateway = manifests.find((m) => m.kind === 'Deployment' && m.metadata.name === 'ingress-gateway');
    // Without `namespace:` in the kustomization, a manifest goes where its own metadata says, else `default`.
    const podNamespace: string = kustomization.namespace ?? gateway.metadata.namespace ?? 'default';
    const [from] = (parseYaml(read('k8s', 'redis-access', 'networkpolicy.yaml')) as any).spec.ingress[0].from;
    expect(from.namespaceSelector.matchLabels).toEqual({ 'kubernetes.io/metadata.name': podNamespace });
    for (const [label, value] of Object.entries(from.podSelector.matchLabels)) {
      expect(gateway.spec.template.metadata.labels[label]).toBe(value);
    }
    // `kubectl apply -k` into a namespace that does not exist fails.
    expect(manifests).toContainEqual(expect.objectContaining({ kind: 'Namespace', metadata: expect.objectContaining({ name: podNamespace }) }));
  });

  it('is applied in Redis\'s namespace by its own kustomization', () => {
    const kustomization = read('k8s', 'redis-access', 'kustomization.yaml');
    expect(kustomization).toMatch(/^namespace: data$/m);
    expect(read('k8s', 'configmap.yaml')).toMatch(/REDIS_URL: redis:\/\/redis\.data\.svc/);
    expect(kustomization).toMatch(/^resources:\n\s+- networkpolicy\.yaml$/m);
    expect(existsSync(deploy('k8s', 'redis-access', 'networkpolicy.yaml'))).toBe(true);
  });
});
