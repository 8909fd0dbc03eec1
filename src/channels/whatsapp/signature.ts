import { createHmac } from 'node:crypto';

// Kept only because bench/scenarios.ts (outside this change) imports it; the gateway verifies
// Meta's signature in src/providers/meta. Delete once bench signs with its own helper.
export function signWhatsAppBody(rawBody: Buffer | string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}
