import { FieldCollector } from './fields';
import { fileSlot, inlineFile, readParts, type MultipartLimits } from './multipart-rules';

export type { FileValue, MultipartLimits } from './multipart-rules';

/** A multipart body's fields, and its identity (contract §5) taken in the same pass. */
export interface ParsedMultipart {
  fields: Record<string, unknown>;
  bodyHash: string;
}

/** Parses a multipart body already read (and size-limited) as bytes: every file part inline. */
export async function parseMultipart(raw: Buffer, contentType: string, limits: MultipartLimits): Promise<ParsedMultipart> {
  const fields = new FieldCollector();
  const bodyHash = await readParts(raw, contentType, limits, () => ({
    field: (name, value) => fields.add(name, value),
    file(part) {
      const fill = fileSlot(fields, part.field);
      const chunks: Buffer[] = [];
      return {
        chunk: (bytes) => void chunks.push(bytes),
        end: () => fill(inlineFile(part, Buffer.concat(chunks))),
      };
    },
  }));
  return { fields: fields.result(), bodyHash };
}
