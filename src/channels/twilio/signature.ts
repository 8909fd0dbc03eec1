// Kept only because bench/scenarios.ts (outside this change) imports it from here; the Twilio
// scheme lives in src/providers/twilio. Delete once bench imports it from there.
export { computeTwilioSignature } from '../../providers/twilio/signature';
