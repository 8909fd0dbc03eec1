/**
 * Certificate chains for the X.509 family tests, made with openssl: a throw-away root, an
 * intermediate it signs, and a leaf the intermediate signs (RSA for PayPal, P-256 for Apple).
 * Extra extensions go in as openssl config lines (Apple marks its certificates with OIDs).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../helpers/tmp';

export interface TestChain {
  root: string;
  intermediate: string;
  leaf: string;
  /** The leaf's private key (PEM). */
  leafKey: string;
}

export interface ChainSpec {
  leafKey: 'rsa' | 'ec';
  leafSubject: string;
  leafExtensions?: string[];
  intermediateExtensions?: string[];
  rootSubject?: string;
  days?: number;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

const newKey = (type: 'rsa' | 'ec') => (type === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']);

export function makeChain(spec: ChainSpec): TestChain {
  const { dir, cleanup } = tempDir('igw-chain-');
  const days = String(spec.days ?? 2);
  try {
    openssl(['req', '-x509', ...newKey('ec'), '-nodes', '-keyout', 'root.key', '-out', 'root.pem', '-days', days,
      '-subj', spec.rootSubject ?? '/CN=igw test root', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
    writeFileSync(join(dir, 'int.cnf'), ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', ...(spec.intermediateExtensions ?? [])].join('\n') + '\n');
    openssl(['req', ...newKey('ec'), '-nodes', '-keyout', 'int.key', '-out', 'int.csr', '-subj', '/CN=igw test intermediate'], dir);
    openssl(['x509', '-req', '-in', 'int.csr', '-CA', 'root.pem', '-CAkey', 'root.key', '-CAcreateserial', '-out', 'int.pem', '-days', days, '-extfile', 'int.cnf'], dir);
    writeFileSync(join(dir, 'leaf.cnf'), ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', ...(spec.leafExtensions ?? [])].join('\n') + '\n');
    openssl(['req', ...newKey(spec.leafKey), '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', spec.leafSubject], dir);
    openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'int.pem', '-CAkey', 'int.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', days, '-extfile', 'leaf.cnf'], dir);
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    return { root: read('root.pem'), intermediate: read('int.pem'), leaf: read('leaf.pem'), leafKey: read('leaf.key') };
  } finally {
    cleanup();
  }
}

/** The base64 DER of a PEM certificate (an `x5c` entry). */
export const derBase64 = (pem: string) => pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '');
