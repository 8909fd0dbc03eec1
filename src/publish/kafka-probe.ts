import { PublishError } from './errors';
import type { KafkaConnection } from './kafka-connection';
import { describeKafkaError } from './kafka-errors';
import type { KafkaTiming } from './timing';

const PING_CACHE_MS = 1000;
const PING_TIMEOUT_MS = 1000;
/** Between probes of a cluster that did not answer. */
const PROBE_PAUSE_MS = 50;

/** Asks the cluster whether it answers: for readiness (cached), and before writing again after a request that got no answer. */
export class ClusterProbe {
  private shared?: Promise<void>;
  private op?: Promise<unknown>;
  private result?: { at: number; error?: string };

  constructor(
    private readonly connection: KafkaConnection,
    private readonly timing: KafkaTiming,
  ) {}

  /** The probe under way, if any (close() waits for it). */
  get inFlight(): Promise<unknown> | undefined {
    return this.op;
  }

  /** Resolves when the cluster answered within the last second; concurrent callers share one probe. */
  check(): Promise<void> {
    const cached = this.result;
    if (cached && Date.now() - cached.at < PING_CACHE_MS) {
      if (cached.error) return Promise.reject(new Error(cached.error));
      return Promise.resolve();
    }
    this.shared ??= this.probe(PING_TIMEOUT_MS)
      .then(
        () => void (this.result = { at: Date.now() }),
        (error: Error) => {
          this.result = { at: Date.now(), error: error.message };
          throw error;
        },
      )
      .finally(() => (this.shared = undefined));
    return this.shared;
  }

  /**
   * Probes the cluster until it answers, for at most one send's budget; rejects with a
   * PublishError (the write then fails, nothing of it sent) if it does not.
   */
  async untilAnswered(): Promise<void> {
    const deadline = performance.now() + this.timing.sendBudgetMs;
    for (;;) {
      const left = deadline - performance.now();
      try {
        await this.probe(Math.max(1, Math.min(this.timing.requestTimeoutMs, left)));
        return;
      } catch (error) {
        if (this.connection.closed) throw new PublishError('closed', 'kafka: sink is closed');
        const reason = (error as Error).message;
        if (performance.now() + PROBE_PAUSE_MS >= deadline || reason.includes('connection error E')) {
          throw new PublishError('unavailable', `${reason} (since a request got no answer)`);
        }
        await new Promise((resolve) => setTimeout(resolve, PROBE_PAUSE_MS));
      }
    }
  }

  /**
   * One cheap Metadata round trip through the admin client, bounded by `timeoutMs`; rejects
   * with a short reason. An admin that could not connect is dropped.
   */
  private async probe(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const op = (async () => {
      const admin = await this.connection.connectedAdmin();
      const cluster = await admin.describeCluster();
      if (!cluster || cluster.brokers.length === 0) throw new Error('no brokers in metadata');
    })();
    this.op = op.catch(() => undefined);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    try {
      await Promise.race([op, timeout]);
    } catch (error) {
      this.connection.dropUnconnectedAdmin();
      throw new Error(
        error instanceof Error && error.message === 'timeout'
          ? `kafka: no answer within ${timeoutMs} ms`
          : error instanceof TypeError // kafkajs' describeCluster when no broker answered at all
            ? 'kafka: unreachable'
            : `kafka: ${describeKafkaError(error)}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }
}
