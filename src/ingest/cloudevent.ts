import { randomUUID } from 'node:crypto';
import { isoFormatter } from '../observability/iso-time';
import type { OutRecord } from '../publish/sink';
import type { EventTrace } from '../http/context';

export interface CloudEvent<T> {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  time: string;
  subject: string;
  datacontenttype: 'application/json';
  /** CloudEvents distributed-tracing extension: the W3C context the consumer continues. */
  traceparent?: string;
  tracestate?: string;
  data: T;
}

const eventTime = isoFormatter();

export function cloudEvent<T>(
  type: string,
  source: string,
  subject: string,
  data: T,
  trace?: EventTrace,
  now = new Date(),
): CloudEvent<T> {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source,
    type,
    time: eventTime(now.getTime()),
    subject,
    datacontenttype: 'application/json',
    ...(trace && { traceparent: trace.traceparent }),
    ...(trace?.tracestate !== undefined && { tracestate: trace.tracestate }),
    data,
  };
}

/**
 * A CloudEvent in structured JSON mode as a Kafka record (contract §4). Its trace context is
 * also in the `traceparent`/`tracestate` headers, where Kafka instrumentations look for it.
 */
export function toRecord(topic: string, key: string, event: CloudEvent<unknown>): OutRecord {
  const headers: Record<string, string> = { 'content-type': 'application/cloudevents+json', ce_type: event.type, ce_id: event.id };
  if (event.traceparent !== undefined) headers.traceparent = event.traceparent;
  if (event.tracestate !== undefined) headers.tracestate = event.tracestate;
  return { topic, key, headers, value: JSON.stringify(event) };
}
