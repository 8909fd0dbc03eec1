import type { z } from 'zod';
import { Refusal } from '../outcomes/refusal';

/** Parses with a zod schema; failures become 400 with one detail per issue (unknown keys named). */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = safeParse(schema, value);
  if (parsed.success) return parsed.data;
  throw new Refusal(
    'invalid_schema',
    'the body does not match the schema',
    parsed.error.issues.map((issue) => ({
      code: issue.code,
      path: issue.path.join('.'),
      message: issue.message,
      ...('keys' in issue && { keys: issue.keys }),
      ...('params' in issue && issue.params),
    })),
  );
}

/** zod walks nested values by recursion: a value nested deep enough overflows the stack. */
function safeParse<S extends z.ZodType>(schema: S, value: unknown) {
  try {
    return schema.safeParse(value);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new Refusal('invalid_json', 'the body nests too deeply to be checked');
  }
}
