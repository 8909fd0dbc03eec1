import { asana } from './asana';
import { dropbox } from './dropbox';
import { ebay } from './ebay';
import { fitbit } from './fitbit';
import { github } from './github';
import { gitlab } from './gitlab';
import { hmac } from './hmac';
import { intercom } from './intercom';
import { linear } from './linear';
import { meta } from './meta';
import { microsoftGraph } from './microsoft-graph';
import { monday } from './monday';
import { okta } from './okta';
import { pagerduty } from './pagerduty';
import { recipe } from './recipe/recipe-provider';
import { RECIPE_PRESETS } from './recipe/presets';
import type { Provider } from './provider';
import { sentry } from './sentry';
import { shopify } from './shopify';
import { smartcar } from './smartcar';
import { slack } from './slack';
import { standardWebhooks } from './standard-webhooks';
import { strava } from './strava';
import { stripe } from './stripe';
import { telegram } from './telegram';
import { twilio } from './twilio';
import { x } from './x';
import { zoom } from './zoom';
import { FAMILY_PRESETS } from './family-presets';

/**
 * Every preset of contract §10 and §10.1. A preset of a recipe family (HMAC, Ed25519, ECDSA,
 * RSA over a template of the raw body) is one entry of presets.json plus its kinds file; a
 * genuinely different scheme is a module, its kinds file, its tests and one line here.
 */
const LISTED: readonly Provider[] = [
  standardWebhooks,
  github,
  stripe,
  slack,
  shopify,
  twilio,
  telegram,
  gitlab,
  linear,
  zoom,
  meta,
  intercom,
  pagerduty,
  sentry,
  dropbox,
  x,
  microsoftGraph,
  hmac,
  okta,
  asana,
  fitbit,
  smartcar,
  strava,
  monday,
  ebay,
  recipe,
];

export const PROVIDERS: readonly Provider[] = [...LISTED, ...RECIPE_PRESETS.filter((preset) => !LISTED.includes(preset)), ...FAMILY_PRESETS];

const BY_NAME = new Map(PROVIDERS.map((provider) => [provider.name, provider]));

export function providerNamed(name: string): Provider | undefined {
  return BY_NAME.get(name);
}

export const PROVIDER_NAMES: readonly string[] = PROVIDERS.map((provider) => provider.name);
