import { SOURCE_HOSTS } from '../../keys/allow-list';
import { ADYEN_SIGNED_FIELDS } from './adyen';

/** What the catalogue says of each code preset of these families (contract §10.G). */
export interface FamilyFacts {
  family: 'jwt' | 'oidc' | 'x509' | 'fields';
  authenticates: 'body' | 'fields' | 'sender';
  keys: 'secrets' | 'publicKeys' | 'none';
  /** The hosts the preset may make the gateway fetch from (§10.1 F), or none. */
  fetches: readonly string[];
  /** Default tolerance of its signed time; undefined: none unless the trigger sets one (§10.H). */
  defaultToleranceSeconds?: number;
  /** The fields the signature covers, where it covers only fields. */
  signedFields?: readonly string[];
}

export const FAMILY_FACTS = {
  vonage: { family: 'jwt', authenticates: 'body', keys: 'secrets', fetches: [], defaultToleranceSeconds: 300 },
  plaid: { family: 'jwt', authenticates: 'body', keys: 'secrets', fetches: SOURCE_HOSTS.plaid, defaultToleranceSeconds: 300 },
  gong: { family: 'jwt', authenticates: 'body', keys: 'publicKeys', fetches: [], defaultToleranceSeconds: 300 },
  'google-pubsub': { family: 'oidc', authenticates: 'sender', keys: 'none', fetches: SOURCE_HOSTS['google-oidc'], defaultToleranceSeconds: 300 },
  'graph-rich': { family: 'oidc', authenticates: 'sender', keys: 'none', fetches: SOURCE_HOSTS['microsoft-identity'], defaultToleranceSeconds: 300 },
  'bot-framework': { family: 'oidc', authenticates: 'sender', keys: 'none', fetches: SOURCE_HOSTS['bot-framework'], defaultToleranceSeconds: 300 },
  'google-chat': { family: 'oidc', authenticates: 'sender', keys: 'none', fetches: SOURCE_HOSTS['google-chat'], defaultToleranceSeconds: 300 },
  'zoho-desk': { family: 'oidc', authenticates: 'sender', keys: 'none', fetches: SOURCE_HOSTS['zoho-desk'], defaultToleranceSeconds: 300 },
  'aws-sns': { family: 'x509', authenticates: 'body', keys: 'none', fetches: SOURCE_HOSTS['aws-sns-certificate'] },
  paypal: { family: 'x509', authenticates: 'body', keys: 'none', fetches: SOURCE_HOSTS['paypal-certificate'], defaultToleranceSeconds: 300 },
  'apple-app-store': { family: 'x509', authenticates: 'body', keys: 'none', fetches: [] },
  adyen: { family: 'fields', authenticates: 'fields', keys: 'secrets', fetches: [], signedFields: ADYEN_SIGNED_FIELDS },
  mailgun: { family: 'fields', authenticates: 'fields', keys: 'secrets', fetches: [], defaultToleranceSeconds: 300, signedFields: ['signature.timestamp', 'signature.token'] },
} as const satisfies Record<string, FamilyFacts>;
