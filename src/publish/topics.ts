/** Logical topics the code speaks of, mapped to physical topic names in one place. */
export type LogicalTopic = 'triggers' | 'chat';

/** The topic settings (config/schema.ts defines and parses them). */
export interface TopicSettings {
  TOPIC_TRIGGERS: string;
  TOPIC_CHAT: string;
}

export function topicName(config: TopicSettings, topic: LogicalTopic): string {
  return topic === 'triggers' ? config.TOPIC_TRIGGERS : config.TOPIC_CHAT;
}
