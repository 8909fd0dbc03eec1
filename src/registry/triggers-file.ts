import type { DependencyCheck } from '../lifecycle';
import type { Logger } from '../observability/logger';
import type { Registry } from './registry';
import { seedRegistry } from './seed-file';

const RETRY_MS = 1000;

/**
 * Applies TRIGGERS_FILE at start (seedRegistry: in full when the file changed since it was
 * last applied, else only what is missing). A file with problems is reported (the process exits 2);
 * a valid file that the registry cannot take yet (Redis down) is retried every second,
 * and the `triggers-file` readiness check fails until it is in.
 */
export class TriggersFile {
  private pending = true;
  private retry?: NodeJS.Timeout;
  readonly check: DependencyCheck = {
    name: 'triggers-file',
    ping: async () => {
      if (this.pending) throw new Error('TRIGGERS_FILE not applied yet');
    },
  };

  constructor(
    private readonly registry: Registry,
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  /** Returns the file's problems; an unavailable registry is not one (it is retried). */
  async apply(): Promise<string[]> {
    try {
      const seeded = await seedRegistry(this.registry, this.file);
      this.pending = false;
      if (seeded.problems.length === 0) {
        const { fileChanged, triggers, channels } = seeded;
        this.logger.info(
          { fileChanged, written: { triggers, channels } },
          fileChanged
            ? 'registry seeded from TRIGGERS_FILE: the file changed since it was last applied, every entry written'
            : 'registry seeded from TRIGGERS_FILE: the file is unchanged, only missing entries created',
        );
      }
      return seeded.problems;
    } catch (error) {
      this.logger.warn({ err: { message: (error as Error).message } }, 'registry unavailable: TRIGGERS_FILE will be applied when it is back');
      this.retry = setTimeout(() => void this.applyLater(), RETRY_MS);
      return [];
    }
  }

  stop(): void {
    clearTimeout(this.retry);
  }

  private async applyLater(): Promise<void> {
    const problems = await this.apply();
    if (problems.length > 0) this.logger.error({ problems }, 'TRIGGERS_FILE not applied');
  }
}
