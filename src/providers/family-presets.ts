import { adyen } from './adyen';
import { appleAppStore } from './apple-app-store';
import { awsSns } from './aws-sns';
import { botFramework } from './bot-framework';
import { gong } from './gong';
import { googleChat } from './google-chat';
import { googlePubsub } from './google-pubsub';
import { graphRich } from './graph-rich';
import { mailgun } from './mailgun';
import { paypal } from './paypal';
import { plaid } from './plaid';
import type { Provider } from './provider';
import { vonage } from './vonage';
import { zohoDesk } from './zoho-desk';

/** The presets of contract §10.1 D that are code (one module each over a family unit). */
export const FAMILY_PRESETS: readonly Provider[] = [awsSns, googlePubsub, vonage, adyen, mailgun, gong, plaid, paypal, appleAppStore, zohoDesk, graphRich, botFramework, googleChat];
