import type { Readable } from 'node:stream';
import { sha256Hex } from '../security';
import { classifyContentType } from '../body/content-type';
import { readParts, type MultipartLimits, type PartSink } from './multipart-rules';
import type { ParsedBody } from './parse-body';

/**
 * Contract §5: a body's identity is what the sender meant, not the bytes of one attempt: a
 * multipart body's is its parts in order (multipart-identity.ts, taken by every multipart
 * parser as it reads), any other body's is its raw bytes' sha256.
 */

/** The content type as a fingerprint takes it: a multipart boundary belongs to the bytes of one attempt, not to the body. */
export function identityContentType(contentType: string | undefined): string {
  return classifyContentType(contentType)?.kind === 'multipart' ? 'multipart/form-data' : (contentType ?? '');
}

/** The identity of a body already parsed: a multipart body's was taken by its parse. */
export function bodyIdentity(raw: Buffer, parsed: Pick<ParsedBody, 'multipartIdentity'>): string {
  return parsed.multipartIdentity ?? sha256Hex(raw);
}

/** Takes nothing: the parts only make the identity. */
const IDENTITY_ONLY: PartSink = {
  field: () => undefined,
  file: () => ({ chunk: () => undefined, end: () => undefined }),
};

/**
 * Reads a multipart body only for its identity: files are hashed as they pass, never kept (a
 * replay's body is compared, not stored). 413 past `maxBodyBytes` or a limit, 400 when malformed.
 */
export function multipartIdentity(body: Readable, contentType: string, limits: MultipartLimits & { maxBodyBytes: number }): Promise<string> {
  const streamed = { stream: body, maxBodyBytes: limits.maxBodyBytes, afterRefusal: 'drain' as const };
  return readParts(streamed, contentType, limits, () => IDENTITY_ONLY, 'compared');
}
