/**
 * A misspelled setting (REDIS_URI for REDIS_URL) used to be ignored without a word: the
 * gateway ran in embedded mode. Now it is warned about at start, naming the closest setting.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/schema';
import { closestSetting, unknownSettings } from '../../src/config/unknown';
import { startGateway, type RunningGateway } from '../helpers/server';
import { tempDir } from '../helpers/tmp';

const DEPLOY = join(__dirname, '..', '..', 'deploy');

describe('unknownSettings', () => {
  it.each([
    ['REDIS_URI', 'REDIS_URL'],
    ['KAFKA_BROKER', 'KAFKA_BROKERS'],
    ['S3_BUCKETS', 'S3_BUCKET'],
    ['ADMIN_TOKEN_FILE', 'ADMIN_TOKEN'],
    ['MAX_BODY_SIZE', 'MAX_BODY_BYTES'],
    ['RATE_LIMIT_DEFUALT', 'RATE_LIMIT_DEFAULT'],
    ['SECRET_KEY', 'SECRETS_KEY'],
    ['TRUSTED_PROXY', 'TRUST_PROXY'],
    ['EVENT_DIR', 'EVENTS_DIR'],
  ])('reports %s, naming %s', (name, closest) => {
    expect(unknownSettings({ [name]: 'x', PORT: '8080' })).toEqual([{ name, closest }]);
  });

  it('leaves alone every known setting and every variable without a setting\'s prefix', () => {
    const known = Object.fromEntries(Object.keys(configSchema.shape).map((name) => [name, 'x']));
    const foreign = { PATH: '/bin', HOME: '/root', HOSTNAME: 'pod-1', NODE_OPTIONS: '--max-old-space-size=384', NODE_ENV: 'production', AWS_REGION: 'eu-west-1', AWS_ROLE_ARN: 'arn', AWS_DEFAULT_REGION: 'eu-west-1', AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/token', NODE_EXTRA_CA_CERTS: '/ca.pem', HTTPS_PROXY: 'http://proxy:3128', PORTAL: 'x', LANG: 'C.UTF-8' };
    expect(unknownSettings({ ...known, ...foreign })).toEqual([]);
  });

  it('leaves the OpenTelemetry SDK its own OTEL_* variables', () => {
    expect(unknownSettings({ OTEL_EXPORTER_OTLP_HEADERS: 'a=b', OTEL_RESOURCE_ATTRIBUTES: 'x=y', OTEL_TRACES_SAMPLER: 'always_on' })).toEqual([]);
  });

  it('leaves alone the service links Kubernetes gives every pod for Services named redis or kafka', () => {
    const links = {
      REDIS_SERVICE_HOST: '10.0.0.1',
      REDIS_SERVICE_PORT: '6379',
      REDIS_SERVICE_PORT_REDIS: '6379',
      REDIS_PORT: 'tcp://10.0.0.1:6379',
      REDIS_PORT_6379_TCP: 'tcp://10.0.0.1:6379',
      REDIS_PORT_6379_TCP_PROTO: 'tcp',
      REDIS_PORT_6379_TCP_PORT: '6379',
      REDIS_PORT_6379_TCP_ADDR: '10.0.0.1',
      KAFKA_SERVICE_HOST: '10.0.0.2',
      KAFKA_PORT_9092_TCP_ADDR: '10.0.0.2',
    };
    expect(unknownSettings(links)).toEqual([]);
  });

  it('lists several in name order', () => {
    expect(unknownSettings({ KAFKA_BROKER: 'k:9092', REDIS_URI: 'redis://r' }).map((u) => u.name)).toEqual(['KAFKA_BROKER', 'REDIS_URI']);
  });

  it('names a closest setting even for a name far from all of them', () => {
    expect(Object.keys(configSchema.shape)).toContain(closestSetting('KAFKA_SOMETHING_ELSE_ENTIRELY'));
  });

  it('finds no misspelling in the settings the deploy files set (commented ones too)', () => {
    const names = new Set<string>();
    const configMap = readFileSync(join(DEPLOY, 'k8s', 'configmap.yaml'), 'utf8');
    for (const name of Object.keys(parse(configMap).data)) names.add(name);
    for (const match of configMap.matchAll(/^\s*#\s*([A-Z][A-Z0-9_]+):/gm)) names.add(match[1]);
    const compose = parse(readFileSync(join(DEPLOY, 'docker-compose.yml'), 'utf8'));
    for (const name of Object.keys(compose.services.gateway.environment)) names.add(name);
    const files = parse(readFileSync(join(DEPLOY, 'docker-compose.files.yml'), 'utf8'));
    for (const name of Object.keys(files.services.gateway.environment)) names.add(name);
    for (const match of readFileSync(join(DEPLOY, 'k8s', 'secrets.env.example'), 'utf8').matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)) names.add(match[1]);
    expect(names.size).toBeGreaterThan(20);
    expect(unknownSettings(Object.fromEntries([...names].map((name) => [name, 'x'])))).toEqual([]);
  });
});

describe('the gateway with a misspelled setting', () => {
  let gateway: RunningGateway | undefined;
  const events = tempDir();
  afterAll(async () => {
    await gateway?.stop();
    events.cleanup();
  });

  it('starts, and warns naming the setting and the closest one, never its value', async () => {
    gateway = await startGateway({ EVENTS_DIR: events.dir, REDIS_URI: 'redis://:Typo5ecretValue@127.0.0.1:6379/0' });
    await gateway.waitForOutput('unknown setting REDIS_URI');
    const line = gateway.output().split('\n').find((l) => l.includes('unknown setting REDIS_URI'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 'warn', setting: 'REDIS_URI', closest: 'REDIS_URL', msg: 'unknown setting REDIS_URI is ignored; did you mean REDIS_URL?' });
    expect(gateway.output()).not.toContain('Typo5ecretValue');
    // Ignored indeed: embedded mode.
    expect(gateway.output()).toMatch(/"mode":\{"redis":false,"kafka":false\}/);
  });
});
