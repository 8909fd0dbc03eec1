import { ref } from '../openapi/components';
import { json, ok, queryParameter, RATE_LIMIT_HEADERS, TRACE_PARAMETERS } from '../openapi/parts';
import type { ChatSender } from '../providers/channels';
import { CHAT_POST, GATE, JSON_MEMORY, READ } from './route-reasons';
import type { RouteSpec } from './table';

const CHAT_ANSWER = 'Every event of the delivery is acknowledged by the sink (or was already). A 503 names how many are missing; the retry publishes only those.';

/**
 * The route table's entries of one channel, built from what its module says of them
 * (`chat.api`, src/providers/channel-record.ts): the GET handshake when its sender shakes hands
 * on GET, and the POST of its deliveries, answered as src/routes/channels.ts answers them.
 */
export function channelRouteSpecs(sender: ChatSender): RouteSpec[] {
  const { channel, api } = sender.chat;
  const path = `/api/channels/${channel}/{channelId}`;
  const common = { path, listeners: ['public' as const], tag: 'ingress' as const, errorHeaders: RATE_LIMIT_HEADERS };
  const shakesHands = sender.handshake?.method === 'GET';
  const specs: RouteSpec[] = [];
  if (shakesHands && api.get) {
    specs.push({
      ...common,
      method: 'get',
      operationId: `verify${api.title}Subscription`,
      summary: api.get.summary,
      security: 'none',
      parameters: api.get.query.map(({ name, description, schema }) => queryParameter(name, description, schema)),
      responses: { '200': ok('The challenge', { 'text/plain': { schema: { type: 'string' } } }, RATE_LIMIT_HEADERS) },
      reasons: ['not_found', ...GATE, 'invalid_handshake', 'verification_failed', 'rate_limited', ...READ],
    });
  }
  const description = shakesHands ? api.post.description : ['Other methods: 405.', api.post.description].filter(Boolean).join(' ');
  // Twilio reads empty TwiML; the others get the counts (src/routes/answers.ts sendChatAck).
  const answer = sender.acknowledgement === 'twiml' ? { 'text/xml': { schema: { type: 'string', const: '<Response></Response>' } } } : json(ref('ChatAck'));
  specs.push({
    ...common,
    method: 'post',
    operationId: `receive${api.title}`,
    summary: api.post.summary,
    ...(description && { description }),
    security: api.security.scheme,
    parameters: TRACE_PARAMETERS,
    requestBody: { required: true, content: api.post.content },
    responses: { '200': ok(CHAT_ANSWER, answer, RATE_LIMIT_HEADERS) },
    // A channel without its own parse reads JSON.
    reasons: [...CHAT_POST, ...(sender.chat.parse ? (api.post.parseReasons ?? []) : JSON_MEMORY)],
  });
  return specs;
}
