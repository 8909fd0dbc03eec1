/**
 * Characters dropped from every file name the gateway publishes or uses in an object key:
 * C0 and C1 controls (CR, LF, NUL, ESC, …), which end up in paths, headers and logs
 * downstream, and the invisible bidirectional controls (U+200E/U+200F marks, U+061C, the
 * U+202A–U+202E embeddings and overrides, the U+2066–U+2069 isolates), which make
 * `invoice\u202Efdp.exe` display as `invoiceexe.pdf`.
 */
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function withoutControlCharacters(name: string): string {
  return name.replace(HIDDEN, '');
}
