import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import { RE2JS } from 're2js';
import { isMultipleOf } from './decimal';

/**
 * `pattern` and `patternProperties` run on RE2 (re2js, pure JS): matching is linear in the
 * input, so no tenant's pattern can stall the process (`^(a+)+$` on `aaaa…!` answers at once).
 * Perl-only syntax RE2 lacks (lookaround, backreferences) fails to compile, so such a schema is
 * refused when it is stored.
 */
function re2(pattern: string): { test: (s: string) => boolean; toString: () => string } {
  const compiled = RE2JS.compile(pattern);
  // Ajv shares compiled patterns between schemas under their toString(): it must name the pattern.
  return { test: (s) => compiled.test(s), toString: () => `re2:${pattern}` };
}
re2.code = 're2js';

/**
 * The validator. `format` is an annotation (the draft 2020-12 default: the format-annotation
 * vocabulary), so `format: "regex"` never compiles a sender's string as a pattern. Unknown
 * keywords are annotations too (strict: false), as the draft allows; the meta-schema still refuses
 * a keyword with a wrong value. Remote `$ref`s are never fetched: a schema naming one is refused.
 *
 * `allErrors: false` stops at the first violation: that run is the one whose cost is bounded by
 * the body alone. `allErrors: true` collects the violations the sender is shown; it runs only on
 * an input already known to be invalid and small enough (see check-worker.ts).
 */
export function newAjv(allErrors: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors,
    strict: false,
    validateFormats: false,
    addUsedSchema: false,
    logger: false,
    // Ajv's code optimisation passes cost more than they save here: a 64 KiB schema of 1,200
    // properties compiled in 3.1 s with them and 0.9 s without (docs/trigger-schema.md).
    code: { regExp: re2, optimize: false },
  });
  ajv.removeKeyword('multipleOf');
  ajv.addKeyword({ keyword: 'multipleOf', type: 'number', schemaType: 'number', errors: true, validate: exactMultipleOf });
  return ajv;
}

/** Contract §13.1: `multipleOf: 0.01` accepts every two-decimal amount (see decimal.ts). */
function exactMultipleOf(divisor: number, value: number): boolean {
  if (isMultipleOf(value, divisor)) return true;
  exactMultipleOf.errors = [{ keyword: 'multipleOf', message: `must be multiple of ${divisor}`, params: { multipleOf: divisor } }];
  return false;
}
exactMultipleOf.errors = [] as Partial<ErrorObject>[];

/** A meta-schema check only (no code generated): cheap, and bounded by the schema's 64 KiB. */
export const metaChecker = newAjv(false);
