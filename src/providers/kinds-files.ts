import type { KindsFile } from './catalogue';
import standardWebhooksKinds from './kinds/standard-webhooks.json';
import githubKinds from './kinds/github.json';
import stripeKinds from './kinds/stripe.json';
import slackKinds from './kinds/slack.json';
import shopifyKinds from './kinds/shopify.json';
import twilioKinds from './kinds/twilio.json';
import telegramKinds from './kinds/telegram.json';
import gitlabKinds from './kinds/gitlab.json';
import linearKinds from './kinds/linear.json';
import zoomKinds from './kinds/zoom.json';
import metaKinds from './kinds/meta.json';
import intercomKinds from './kinds/intercom.json';
import pagerdutyKinds from './kinds/pagerduty.json';
import sentryKinds from './kinds/sentry.json';
import dropboxKinds from './kinds/dropbox.json';
import xKinds from './kinds/x.json';
import microsoftGraphKinds from './kinds/microsoft-graph.json';
import hmacKinds from './kinds/hmac.json';
import oktaKinds from './kinds/okta.json';
import asanaKinds from './kinds/asana.json';
import recipeKinds from './kinds/recipe.json';
import workosKinds from './kinds/workos.json';
import paddleKinds from './kinds/paddle.json';
import calendlyKinds from './kinds/calendly.json';
import muxKinds from './kinds/mux.json';
import rootlyKinds from './kinds/rootly.json';
import tiktokKinds from './kinds/tiktok.json';
import boxKinds from './kinds/box.json';
import twitchKinds from './kinds/twitch.json';
import zendeskKinds from './kinds/zendesk.json';
import hubspotKinds from './kinds/hubspot.json';
import squareKinds from './kinds/square.json';
import trelloKinds from './kinds/trello.json';
import razorpayKinds from './kinds/razorpay.json';
import woocommerceKinds from './kinds/woocommerce.json';
import typeformKinds from './kinds/typeform.json';
import vercelKinds from './kinds/vercel.json';
import notionKinds from './kinds/notion.json';
import calcomKinds from './kinds/calcom.json';
import clickupKinds from './kinds/clickup.json';
import attioKinds from './kinds/attio.json';
import ashbyKinds from './kinds/ashby.json';
import greenhouseKinds from './kinds/greenhouse.json';
import jiraKinds from './kinds/jira.json';
import bitbucketKinds from './kinds/bitbucket.json';
import coinbaseCommerceKinds from './kinds/coinbase-commerce.json';
import teamsOutgoingKinds from './kinds/teams-outgoing.json';
import discordKinds from './kinds/discord.json';
import telnyxKinds from './kinds/telnyx.json';
import sendgridKinds from './kinds/sendgrid.json';
import awsSnsKinds from './kinds/aws-sns.json';
import googlePubsubKinds from './kinds/google-pubsub.json';
import vonageKinds from './kinds/vonage.json';
import adyenKinds from './kinds/adyen.json';
import mailgunKinds from './kinds/mailgun.json';
import gongKinds from './kinds/gong.json';
import plaidKinds from './kinds/plaid.json';
import paypalKinds from './kinds/paypal.json';
import appleAppStoreKinds from './kinds/apple-app-store.json';
import zohoDeskKinds from './kinds/zoho-desk.json';
import graphRichKinds from './kinds/graph-rich.json';
import botFrameworkKinds from './kinds/bot-framework.json';
import googleChatKinds from './kinds/google-chat.json';
import xeroKinds from './kinds/xero.json';
import worldlineKinds from './kinds/worldline.json';
import fitbitKinds from './kinds/fitbit.json';
import smartcarKinds from './kinds/smartcar.json';
import stravaKinds from './kinds/strava.json';
import mondayKinds from './kinds/monday.json';
import ebayKinds from './kinds/ebay.json';

/** Every kinds file shipped (contract §10: the kinds each provider documents, with their sources), in the registry's order. */
export const KINDS_FILES: readonly KindsFile[] = [
  standardWebhooksKinds,
  githubKinds,
  stripeKinds,
  slackKinds,
  shopifyKinds,
  twilioKinds,
  telegramKinds,
  gitlabKinds,
  linearKinds,
  zoomKinds,
  metaKinds,
  intercomKinds,
  pagerdutyKinds,
  sentryKinds,
  dropboxKinds,
  xKinds,
  microsoftGraphKinds,
  hmacKinds,
  oktaKinds,
  asanaKinds,
  recipeKinds,
  workosKinds,
  paddleKinds,
  calendlyKinds,
  muxKinds,
  rootlyKinds,
  tiktokKinds,
  boxKinds,
  twitchKinds,
  zendeskKinds,
  hubspotKinds,
  squareKinds,
  trelloKinds,
  razorpayKinds,
  woocommerceKinds,
  typeformKinds,
  vercelKinds,
  notionKinds,
  calcomKinds,
  clickupKinds,
  attioKinds,
  ashbyKinds,
  greenhouseKinds,
  jiraKinds,
  bitbucketKinds,
  coinbaseCommerceKinds,
  teamsOutgoingKinds,
  discordKinds,
  telnyxKinds,
  sendgridKinds,
  awsSnsKinds,
  googlePubsubKinds,
  vonageKinds,
  adyenKinds,
  mailgunKinds,
  gongKinds,
  plaidKinds,
  paypalKinds,
  appleAppStoreKinds,
  zohoDeskKinds,
  graphRichKinds,
  botFrameworkKinds,
  googleChatKinds,
  xeroKinds,
  worldlineKinds,
  fitbitKinds,
  smartcarKinds,
  stravaKinds,
  mondayKinds,
  ebayKinds,
];
