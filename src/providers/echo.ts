import type { HandshakeAnswer } from './provider';

/** Longest challenge echoed back; a longer one is refused (400) rather than reflected. */
const MAX_ECHO = 1024;

/** A challenge echoed as plain text that no browser will sniff into HTML (Dropbox asks for exactly this). */
export function plainTextEcho(value: unknown): HandshakeAnswer | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  if (value.length > MAX_ECHO) return 'invalid';
  return { status: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }, body: value };
}
