/** The targets bench:profile and bench:instructions take by short name (baseline-*: with --baseline <dist dir>). */
export const PROFILE_TARGETS: Record<string, string> = {
  floor: 'floor (bare express 5)',
  naive: 'naive receiver (Redis + Kafka)',
  batched: 'batched receiver (Redis + Kafka, nothing else)',
  embedded: 'gateway, embedded',
  'redis-kafka': 'gateway, Redis + Kafka',
  'embedded-nolog': 'gateway, embedded, DELIVERY_LOG_MAX=0',
  'redis-kafka-nolog': 'gateway, Redis + Kafka, DELIVERY_LOG_MAX=0',
  'baseline-embedded': 'baseline build, embedded',
  'baseline-redis-kafka': 'baseline build, Redis + Kafka',
};
