import type { Config } from '../config/schema';
import type { Provider } from '../providers/provider';

/**
 * The most bytes a body may have from this sender: a chat sender's own setting (Meta:
 * WHATSAPP_MAX_BODY_BYTES) on its channel route and on a trigger naming it alike, so a delivery
 * valid on one route is not too large on the other (contract §10); else MAX_BODY_BYTES.
 */
export function senderBodyLimit(config: Config, sender: Provider | undefined): number {
  return config[sender?.chat?.bodyLimitSetting ?? 'MAX_BODY_BYTES'];
}
