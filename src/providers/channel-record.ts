import { z } from 'zod';
import type { Reason } from '../outcomes/reasons';

/*
 * What a chat channel module owns besides its sender (contract §3, §11): the record
 * PUT /admin/channels/{id} takes, which of its fields are secrets and how each is kept, and
 * what the OpenAPI document says of its routes. The registry, the sealed fields, the route
 * table and the document are derived from these (src/providers/channels.ts), so a new channel
 * is its folder and one line in PROVIDERS.
 */

/**
 * The record types of every channel, by channel name. Each channel module adds its own
 * (declaration merging), e.g. in `meta/channel.ts`:
 * `declare module '../channel-record' { interface ChannelTypes { whatsapp: { input: …; stored: … } } }`.
 */
export interface ChannelTypes {}

/** The channel route's provider names (`whatsapp`, `twilio`, `telegram`). */
export type ChatProvider = keyof ChannelTypes;
/** What the admin API and TRIGGERS_FILE accept for a channel, by `provider`. */
export type ChannelInput = ChannelTypes[ChatProvider]['input'];
/** A channel as the registry keeps it. */
export type StoredChannel = ChannelTypes[ChatProvider]['stored'];

const id = z.string().min(1).max(200);
/** The fields every channel record has besides `provider` and its own. */
export const channelBase = { workspaceId: id, inboxId: id };

/**
 * How a secret of the input is kept: `sealed` (kept under its name, sealed at rest with
 * SECRETS_KEY, because the gateway reads it back to check an HMAC or compare a token) or
 * `hashed` (kept only as the SHA-256 hex in `<name>Hash`, for a token it only compares).
 * Neither is ever returned: a read shows `<name>Set: true` instead.
 */
export type SecretKeeping = 'sealed' | 'hashed';

export interface ChannelRecord {
  /** What PUT /admin/channels/{id} takes: a strict object whose `provider` is the channel's name. Unknown keys are refused. */
  input: z.ZodObject;
  /** The input's secret fields, in the order a read shows their `<name>Set` flags. */
  secrets: Readonly<Record<string, SecretKeeping>>;
}

/** A query parameter of a GET handshake, for the document. */
export interface QueryParameterDoc {
  name: string;
  description: string;
  schema?: Record<string, unknown>;
}

/** What the OpenAPI document says of the channel (src/routes/channel-table.ts builds its routes). */
export interface ChannelApi {
  /** In component names and operation ids: `<title>ChannelInput`, `<title>Channel`, `receive<title>`. */
  title: string;
  /** The security scheme of its POST: the header its sender authenticates with (the module's constant). */
  security: { scheme: string; header: string; description: string };
  post: {
    summary: string;
    /** After `Other methods: 405.` for a sender without a GET handshake. */
    description?: string;
    /** The request body's content, by media type. */
    content: Record<string, unknown>;
    /** The refusals of its own `parse` (a JSON body's are those of JSON parsing). */
    parseReasons?: Reason[];
  };
  /** The GET handshake, for a sender whose `handshake` is on GET. */
  get?: { summary: string; query: QueryParameterDoc[] };
}

/** The stored field that keeps a secret of the input. */
export function storedSecretField(name: string, keeping: SecretKeeping): string {
  return keeping === 'hashed' ? `${name}Hash` : name;
}

/** The fields of a stored record sealed at rest. */
export function sealedFields(record: ChannelRecord): string[] {
  return Object.entries(record.secrets).flatMap(([name, keeping]) => (keeping === 'sealed' ? [name] : []));
}
