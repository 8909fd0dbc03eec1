import { withoutControlCharacters } from './file-name';

/**
 * Where one request's files go: `<workspaceId>/<triggerPath>/<yyyy-mm-dd>/<eventId>/` (the
 * store adds its prefix). The workspace id is percent-encoded: one workspace's folder can
 * never be another's (`a/b` and `a_b` stay apart), nor climb out of its own.
 */
export function eventFolder(workspaceId: string, triggerPath: string, eventId: string, now: Date): string {
  return `${encodeURIComponent(workspaceId).replace(/\./g, '%2E')}/${triggerPath}/${now.toISOString().slice(0, 10)}/${eventId}/`;
}

/** `<n>-<safe name>`: the part's number keeps two files of the same name apart. */
export function fileKey(folder: string, n: number, filename: string | undefined): string {
  return `${folder}${n}-${safeName(filename ?? '', 100) || 'file'}`;
}

/**
 * A file name as one key segment: its last path segment only; control and bidi characters
 * dropped; letters, digits, `.`, `_`, `-` kept, every other character (spaces, non-ASCII) a
 * `_`; no leading dots.
 */
export function safeName(name: string, maxLength: number): string {
  const base = withoutControlCharacters(name.split(/[\\/]/).pop() ?? '');
  return base
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, maxLength);
}
