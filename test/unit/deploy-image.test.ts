/** The Dockerfile: a base that cannot move under a rebuild, and both listeners declared. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';

const root = join(__dirname, '..', '..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const deployment = parseYaml(readFileSync(join(root, 'deploy', 'k8s', 'deployment.yaml'), 'utf8'));

describe('the image', () => {
  it('builds and runs on Node 24 bookworm-slim, pinned by the digest of its multi-platform index', () => {
    const image = dockerfile.match(/^ARG NODE_IMAGE=(\S+)$/m)?.[1];
    expect(image).toMatch(/^node:24(\.\d+\.\d+)?-bookworm-slim@sha256:[0-9a-f]{64}$/);
    // Every stage starts from that one argument: none names a moving tag of its own.
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThan(1);
    expect(new Set(froms)).toEqual(new Set(['${NODE_IMAGE}']));
  });

  it('exposes both listeners the Deployment declares', () => {
    const exposed = [...dockerfile.matchAll(/^EXPOSE (.+)$/gm)].flatMap((m) => m[1].trim().split(/\s+/)).map(Number).sort();
    const containerPorts = deployment.spec.template.spec.containers[0].ports.map((p: { containerPort: number }) => p.containerPort).sort();
    expect(exposed).toEqual(containerPorts);
  });
});
