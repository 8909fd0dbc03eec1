import type { Logger } from '../observability/logger';
import { PublishError } from './errors';
import type { KafkaConnection } from './kafka-connection';
import { classifyKafkaError } from './kafka-errors';
import type { TopicState } from './sink';

/** A topic found missing (or not authorized) is looked at again this often; until then its records fail at once. */
const TOPIC_RECHECK_MS = 5000;

/**
 * What is known of each configured topic. Topics are checked once connected, through the admin
 * client, which never asks the broker to create one; a topic missing (or not writable) is
 * logged as an error, reported, and looked at again every TOPIC_RECHECK_MS until found.
 */
export class TopicWatcher {
  private readonly known = new Map<string, { state: TopicState; cause?: string }>();
  private checking?: Promise<void>;
  private recheckTimer?: NodeJS.Timeout;

  constructor(
    topics: string[],
    private readonly connection: KafkaConnection,
    private readonly logger: Logger,
    private readonly onTopicState?: (topic: string, state: TopicState) => void,
  ) {
    for (const topic of topics) this.known.set(topic, { state: 'unknown' });
  }

  /** The check under way, if any (start() and close() wait for it). */
  get inFlight(): Promise<void> | undefined {
    return this.checking;
  }

  /** What is known of each configured topic: `unknown` until checked. */
  states(): Record<string, TopicState> {
    return Object.fromEntries([...this.known].map(([topic, { state }]) => [topic, state]));
  }

  /** Once connected: checks the topics when any is still unknown. */
  checkUnknown(): void {
    if ([...this.known.values()].some((t) => t.state === 'unknown')) this.check();
  }

  /** The failure for a record of a topic known to be missing or not authorized; undefined otherwise. */
  refusal(topic: string): PublishError | undefined {
    const known = this.known.get(topic);
    if (known?.state !== 'missing' && known?.state !== 'unauthorized') return undefined;
    return new PublishError('topic_missing', `kafka: topic ${topic} is ${known.state} (${known.cause})`, topic);
  }

  /** A topic the cluster says does not exist, or may not be written (the cause says which). */
  mark(topic: string, cause: string): void {
    this.setState(topic, cause === 'TOPIC_AUTHORIZATION_FAILED' ? 'unauthorized' : 'missing', cause);
    this.scheduleRecheck();
  }

  stop(): void {
    clearTimeout(this.recheckTimer);
  }

  /** Asks the cluster about each configured topic on its own: one missing topic must not hide the other. */
  private check(): void {
    if (this.checking || this.connection.closed) return;
    this.checking = (async () => {
      for (const topic of this.known.keys()) {
        try {
          const admin = await this.connection.connectedAdmin();
          await admin.fetchTopicMetadata({ topics: [topic] });
          this.setState(topic, 'present');
        } catch (error) {
          const failure = classifyKafkaError(error, topic);
          if (failure.error instanceof PublishError && failure.error.reason === 'topic_missing') this.mark(topic, failure.cause);
          // Anything else (the cluster did not answer) tells nothing about the topic.
        }
      }
    })().finally(() => {
      this.checking = undefined;
      this.scheduleRecheck();
    });
  }

  private scheduleRecheck(): void {
    if (this.connection.closed || this.recheckTimer) return;
    if ([...this.known.values()].every((t) => t.state === 'present')) return;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      if (this.connection.connected) this.check();
      else this.scheduleRecheck();
    }, TOPIC_RECHECK_MS);
    this.recheckTimer.unref();
  }

  private setState(topic: string, state: TopicState, cause?: string): void {
    const before = this.known.get(topic);
    this.known.set(topic, { state, cause });
    if (before?.state === state) return;
    this.onTopicState?.(topic, state);
    if (state === 'present') {
      this.logger.info({ topic }, 'kafka topic found');
    } else {
      this.logger.error(
        { topic, cause },
        'kafka topic missing or not writable: its events are refused with 503 until it exists (the gateway never creates topics)',
      );
    }
  }
}
