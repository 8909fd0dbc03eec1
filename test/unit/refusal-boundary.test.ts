import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/*
 * ARCHITECTURE "one sender, one pipeline": below routes/ the code refuses with a domain value
 * (src/outcomes/refusal.ts) and only src/http/ renders it. These read the source files and
 * check their imports.
 */

const root = resolve(__dirname, '..', '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The relative modules a source text imports: static, type-only, re-exports, side-effect imports, dynamic import and require. */
function relativeSpecifiers(text: string): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]);
  return specifiers.filter((specifier) => specifier.startsWith('.'));
}

/** What a file imports, as paths from the repository root without extension. */
function importsOf(file: string, text = readFileSync(file, 'utf8')): string[] {
  return relativeSpecifiers(text).map((specifier) => relative(root, resolve(dirname(file), specifier)).replace(/\.(ts|js)$/, ''));
}

const CORE = ['ingest', 'providers', 'ratelimit', 'ingress', 'files', 'json-schema', 'delivery-log'];

describe('refusals are domain values', () => {
  it.each(CORE)('no file under src/%s imports src/http/errors or names HttpError', (folder) => {
    const files = sourceFiles(join(src, folder));
    expect(files.length).toBeGreaterThan(0);
    const offenders = files.filter((file) => importsOf(file).includes('src/http/errors') || /\bHttpError\b/.test(readFileSync(file, 'utf8')));
    expect(offenders.map((file) => relative(root, file))).toEqual([]);
  });

  it('finds an import of src/http/errors however it is written', () => {
    const file = join(src, 'ingest', 'example.ts');
    for (const line of [
      "import { HttpError } from '../http/errors';",
      "import type { ErrorBody } from '../http/errors.js';",
      'export { renderRefusal } from "../http/errors";',
      "const { HttpError } = require('../http/errors');",
      "const errors = await import('../http/errors');",
      "import '../http/errors';",
    ]) {
      expect(importsOf(file, line)).toEqual(['src/http/errors']);
    }
    expect(importsOf(file, "import { Refusal } from '../outcomes/refusal';")).toEqual(['src/outcomes/refusal']);
  });

  it('the catalogue and the refusal import nothing outside src/outcomes, and not one another in a circle', () => {
    const files = sourceFiles(join(src, 'outcomes'));
    const graph = new Map(files.map((file) => [relative(root, file).replace(/\.ts$/, ''), importsOf(file)]));
    for (const [file, imports] of graph) {
      for (const target of imports) expect(`${file} → ${target}`).toMatch(/→ src\/outcomes\//);
    }
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
      (graph.get(from) ?? []).some((next) => next === to || (!seen.has(next) && (seen.add(next), reaches(next, to, seen))));
    for (const file of graph.keys()) expect(`${file} reaches itself: ${reaches(file, file)}`).toBe(`${file} reaches itself: false`);
  });

  it('src/http/errors.ts and the catalogue do not import each other in a circle', () => {
    const catalogueImports = sourceFiles(join(src, 'outcomes')).flatMap((file) => importsOf(file));
    expect(catalogueImports.filter((target) => target.startsWith('src/http/'))).toEqual([]);
  });

  it('no file reads res.locals: the request context is read through contextOf (src/http/context.ts)', () => {
    const offenders = sourceFiles(src).filter((file) => /\.locals\b/.test(readFileSync(file, 'utf8')));
    expect(offenders.map((file) => relative(root, file))).toEqual([]);
  });
});
