import type { Config } from '../config/schema';

/** Logical topics the code speaks of, mapped to physical topic names in one place. */
export type LogicalTopic = 'triggers' | 'chat';

export function topicName(config: Pick<Config, 'TOPIC_TRIGGERS' | 'TOPIC_CHAT'>, topic: LogicalTopic): string {
  return topic === 'triggers' ? config.TOPIC_TRIGGERS : config.TOPIC_CHAT;
}
