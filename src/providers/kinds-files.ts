import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KindsFile } from './catalogue';

/**
 * The folder of kinds files (contract §10: the kinds each provider documents, with their
 * sources): `kinds/<provider>.json` beside this module, in src/ and in every build (each build
 * script copies the folder with scripts/copy-kinds.js). A new provider's kinds file is read
 * without a line of code.
 */
export const KINDS_DIR = join(__dirname, 'kinds');

/** The kinds files of a folder; a malformed one stops the start with its name. */
export function readKindsFiles(dir: string): KindsFile[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => checked(name, JSON.parse(readFileSync(join(dir, name), 'utf8'))));
}

/** Every kinds file shipped, read once at start-up. */
export const KINDS_FILES: readonly KindsFile[] = readKindsFiles(KINDS_DIR);

function checked(name: string, file: Partial<KindsFile>): KindsFile {
  const strings = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');
  if (typeof file.provider !== 'string' || `${file.provider}.json` !== name || !strings(file.kinds) || !strings(file.sources)) {
    throw new Error(`kinds file ${name}: needs "provider" (its file name), "sources" and "kinds" (lists of strings)`);
  }
  return file as KindsFile;
}
