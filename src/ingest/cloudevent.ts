import { randomUUID } from 'node:crypto';
import type { OutRecord } from '../publish/sink';

export interface CloudEvent<T> {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  time: string;
  subject: string;
  datacontenttype: 'application/json';
  data: T;
}

export function cloudEvent<T>(type: string, source: string, subject: string, data: T, now = new Date()): CloudEvent<T> {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source,
    type,
    time: now.toISOString(),
    subject,
    datacontenttype: 'application/json',
    data,
  };
}

/** A CloudEvent in structured JSON mode as a Kafka record (contract §4). */
export function toRecord(topic: string, key: string, event: CloudEvent<unknown>): OutRecord {
  return {
    topic,
    key,
    headers: { 'content-type': 'application/cloudevents+json', ce_type: event.type, ce_id: event.id },
    value: JSON.stringify(event),
  };
}
