import type { z } from 'zod';
import { HttpError } from './errors';

/** Parses with a zod schema; failures become 400 with one detail per issue (unknown keys named). */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new HttpError(
    'BAD_REQUEST',
    'the body does not match the schema',
    parsed.error.issues.map((issue) => ({
      code: issue.code,
      path: issue.path.join('.'),
      message: issue.message,
      ...('keys' in issue && { keys: issue.keys }),
    })),
  );
}
