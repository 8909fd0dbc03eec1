export type BodyKind = 'json' | 'form' | 'multipart' | 'text';

export interface MediaType {
  kind: BodyKind;
  /** The media type without parameters, lower case. */
  essence: string;
  charset?: string;
}

let last: { header: string; media: MediaType | undefined } | undefined;

/**
 * Classifies a Content-Type header; undefined for a type the gateway does not accept. A request
 * asks several times, and senders send the same few headers: the last answer is kept.
 */
export function classifyContentType(header: string | undefined): MediaType | undefined {
  if (!header) return undefined;
  if (last?.header === header) return last.media;
  const media = classify(header);
  last = { header, media: media && Object.freeze(media) };
  return media;
}

function classify(header: string): MediaType | undefined {
  const [rawEssence, ...params] = header.split(';');
  const essence = rawEssence.trim().toLowerCase();
  const charset = params
    .map((p) => p.trim().toLowerCase())
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/^"|"$/g, '');
  const kind = kindOf(essence);
  return kind && { kind, essence, ...(charset && { charset }) };
}

function kindOf(essence: string): BodyKind | undefined {
  if (essence === 'application/json' || (essence.startsWith('application/') && essence.endsWith('+json'))) return 'json';
  if (essence === 'application/x-www-form-urlencoded') return 'form';
  if (essence === 'multipart/form-data') return 'multipart';
  if (essence === 'text/plain') return 'text';
  return undefined;
}
