/** The largest file that travels inline in the event (a data URL) when there is no file store. */
export const MAX_INLINE_ONLY_FILE_BYTES = 64 * 1024 * 1024;

/** The settings fileStoreProblems reads (config/schema.ts defines and parses them). */
export interface FileStoreRuleSettings {
  S3_BUCKET?: string;
  S3_PREFIX?: string;
  S3_REGION?: string;
  S3_ENDPOINT?: string;
  MAX_FILE_BYTES: number;
}

/** Problems of the file store settings (contract §12), one line each. */
export function fileStoreProblems(config: FileStoreRuleSettings): string[] {
  const problems: string[] = [];
  if (!config.S3_BUCKET) {
    for (const name of ['S3_PREFIX', 'S3_REGION', 'S3_ENDPOINT'] as const) {
      if (config[name] !== undefined) problems.push(`${name}: has no effect without S3_BUCKET`);
    }
    if (config.MAX_FILE_BYTES > MAX_INLINE_ONLY_FILE_BYTES) {
      problems.push(`MAX_FILE_BYTES: above ${MAX_INLINE_ONLY_FILE_BYTES} needs a file store (S3_BUCKET): files travel inline in the event otherwise`);
    }
  }
  return problems;
}
