import { loadConfig } from '../../src/config/load';
import { eventFolder, fileKey, safeName } from '../../src/files/object-key';

describe('object keys of stored files', () => {
  it('is <workspaceId>/<triggerPath>/<yyyy-mm-dd>/<eventId>/<n>-<safe name>', () => {
    const folder = eventFolder('ws-1', 'orders', 'e-1', new Date('2026-03-04T23:59:59Z'));
    expect(fileKey(folder, 2, 'Invoice March.pdf')).toBe('ws-1/orders/2026-03-04/e-1/2-Invoice_March.pdf');
  });

  it('keeps a name from climbing, hiding or breaking the key', () => {
    expect(safeName('../../etc/passwd', 100)).toBe('passwd');
    expect(safeName('..\\..\\boot.ini', 100)).toBe('boot.ini');
    expect(safeName('..hidden', 100)).toBe('hidden');
    expect(safeName('a\u0000b\r\nc', 100)).toBe('abc');
    expect(safeName('résumé ünïcode.txt', 100)).toBe('r_sum___n_code.txt');
    expect(safeName('x'.repeat(300), 100)).toHaveLength(100);
    expect(fileKey('f/', 1, undefined)).toBe('f/1-file');
    expect(fileKey('f/', 1, '..')).toBe('f/1-file');
  });

  it('drops bidi controls and C0/C1 controls instead of turning them into visible underscores', () => {
    expect(safeName('invoice\u202Efdp.exe', 100)).toBe('invoicefdp.exe');
    const hidden = '\u200E\u200F\u061C\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u0085\u009B\u001B\u007F';
    expect(safeName(`a${hidden}b.txt`, 100)).toBe('ab.txt');
    expect(fileKey('f/', 1, '\u202E\u2066')).toBe('f/1-file');
  });

  it('percent-encodes a workspace id, so no two workspaces share a folder and none climbs out', () => {
    const day = new Date('2026-01-01T00:00:00Z');
    expect(eventFolder('team/a', 'p', 'e', day)).toBe('team%2Fa/p/2026-01-01/e/');
    expect(eventFolder('team_a', 'p', 'e', day)).toBe('team_a/p/2026-01-01/e/');
    expect(eventFolder('..', 'p', 'e', day)).toBe('%2E%2E/p/2026-01-01/e/');
  });
});

describe('file store settings', () => {
  it('lets MAX_FILE_BYTES reach 5 GiB only with a file store', () => {
    const big = String(5 * 1024 * 1024 * 1024);
    expect(loadConfig({ MAX_FILE_BYTES: big, S3_BUCKET: 'uploads-bucket' })).toMatchObject({ ok: true });
    const inline = loadConfig({ MAX_FILE_BYTES: big });
    expect(inline.ok).toBe(false);
    expect(!inline.ok && inline.problems.join('\n')).toMatch(/^MAX_FILE_BYTES: above 67108864 needs a file store/);
    const over = loadConfig({ MAX_FILE_BYTES: String(5 * 1024 * 1024 * 1024 + 1), S3_BUCKET: 'uploads-bucket' });
    expect(!over.ok && over.problems[0]).toMatch(/^MAX_FILE_BYTES:/);
  });

  it('refuses S3 settings without a bucket, and malformed ones', () => {
    const orphan = loadConfig({ S3_ENDPOINT: 'http://minio:9000' });
    expect(!orphan.ok && orphan.problems).toEqual(['S3_ENDPOINT: has no effect without S3_BUCKET']);
    const bad = loadConfig({ S3_BUCKET: 'Not_A_Bucket', S3_PREFIX: 'no-slash', S3_ENDPOINT: 'ftp://x' });
    expect(!bad.ok && bad.problems.map((p) => p.split(':')[0]).sort()).toEqual(['S3_BUCKET', 'S3_ENDPOINT', 'S3_PREFIX']);
  });

  it('defaults INLINE_FILE_MAX_BYTES to 64 KiB and path-style off', () => {
    const loaded = loadConfig({ S3_BUCKET: 'uploads-bucket' });
    expect(loaded.ok && [loaded.config.INLINE_FILE_MAX_BYTES, loaded.config.S3_FORCE_PATH_STYLE]).toEqual([65536, false]);
  });
});
