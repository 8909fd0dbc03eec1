import { createHash } from 'node:crypto';

/**
 * Contract §5: a body's identity is what the sender meant, not the bytes of one attempt. A
 * multipart body's is its parts in order (names, text values, file names, types, file content
 * hashes): `curl -F` and every multipart client pick a new boundary on each attempt, so a retry
 * has other bytes but the same identity. Any other body's identity is its raw bytes' sha256
 * (body-identity.ts).
 */
export class MultipartIdentity {
  private readonly parts: string[][] = [];

  field(name: string, value: string): void {
    this.parts.push(['field', name, value]);
  }

  /** A file part, in its place; its content hash is filled in when the part ends. */
  file(name: string, filename: string | undefined, mime: string): (sha256: string) => void {
    const part = ['file', name, filename ?? '', mime, ''];
    this.parts.push(part);
    return (sha256) => {
      part[4] = sha256;
    };
  }

  /** The identity, hex (where the raw bytes' sha256 stands for other bodies). */
  digest(): string {
    const hash = createHash('sha256').update('multipart/form-data\n');
    for (const part of this.parts) hash.update(`${JSON.stringify(part)}\n`);
    return hash.digest('hex');
  }
}
