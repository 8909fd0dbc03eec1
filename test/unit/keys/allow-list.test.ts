import { allowedKeyUrl, type KeySource } from '../../../src/keys/allow-list';

const allowed: Array<[KeySource, string]> = [
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem'],
  ['aws-sns-certificate', 'https://sns.us-gov-west-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem'],
  ['aws-sns-certificate', 'https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem'],
  ['aws-sns-certificate', 'https://sns.eu-west-1.amazonaws.com:443/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem'],
  ['aws-sns-subscribe', 'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37'],
  ['google-oidc', 'https://www.googleapis.com/oauth2/v3/certs'],
  ['microsoft-identity', 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/discovery/v2.0/keys'],
  ['microsoft-identity', 'https://login.microsoftonline.com/common/discovery/v2.0/keys'],
  ['bot-framework', 'https://login.botframework.com/v1/.well-known/keys'],
  ['zoho-desk', 'https://desk.zoho.com/.well-known/jwks.json'],
  ['zoho-desk', 'https://desk.zoho.com.au/.well-known/jwks.json'],
  ['zoho-desk', 'https://desk.zoho.com.cn/.well-known/jwks.json'],
  ['paypal-certificate', 'https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-1d93a270'],
  ['paypal-certificate', 'https://api-m.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-a5cafa77'],
  ['plaid', 'https://production.plaid.com/webhook_verification_key/get'],
  ['plaid', 'https://sandbox.plaid.com/webhook_verification_key/get'],
];

const refused: Array<[KeySource, string, string]> = [
  ['aws-sns-certificate', 'http://sns.us-east-1.amazonaws.com/a.pem', 'plain http'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com:8443/a.pem', 'another port'],
  ['aws-sns-certificate', 'https://user:pw@sns.us-east-1.amazonaws.com/a.pem', 'userinfo'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com@evil.example.com/a.pem', 'userinfo hiding the host'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com.evil.example.com/a.pem', 'a suffix host'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com./a.pem', 'a trailing dot'],
  ['aws-sns-certificate', 'https://evilsns.us-east-1.amazonaws.com/a.pem', 'another service'],
  ['aws-sns-certificate', 'https://s3.us-east-1.amazonaws.com/a.pem', 'another AWS host'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com/a.pem?x=1', 'a query'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com/dir/a.pem', 'a nested path'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com/a.txt', 'not a .pem'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com/random-name.pem', 'a .pem not named SimpleNotificationService-<32 hex>'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem', 'a short hex name'],
  ['aws-sns-certificate', 'https://sns.us-east-1.amazonaws.com/a.pem#frag', 'a fragment'],
  ['aws-sns-certificate', 'https://52.94.236.248/a.pem', 'an IPv4 literal'],
  ['aws-sns-certificate', 'https://[::1]/a.pem', 'an IPv6 literal'],
  ['aws-sns-certificate', 'https://0x7f000001/a.pem', 'a hex IPv4'],
  ['aws-sns-certificate', 'not a url', 'garbage'],
  ['aws-sns-certificate', `https://sns.us-east-1.amazonaws.com/${'a'.repeat(3000)}.pem`, 'too long'],
  ['aws-sns-subscribe', 'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&TopicArn=x', 'another action'],
  ['aws-sns-subscribe', 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Action=Publish', 'two actions'],
  ['aws-sns-subscribe', 'https://sns.us-east-1.amazonaws.com/other?Action=ConfirmSubscription', 'another path'],
  ['aws-sns-certificate', 'https://www.googleapis.com/oauth2/v3/certs', "another source's URL"],
  ['google-oidc', 'https://www.googleapis.com/oauth2/v1/certs', 'another path'],
  ['google-oidc', 'https://www.googleapis.com/oauth2/v3/certs?x', 'a query'],
  ['google-oidc', 'https://attacker.example/jwks.json', 'a jku of the token'],
  ['microsoft-identity', 'https://login.microsoftonline.com/a/b/discovery/v2.0/keys', 'a tenant with a slash'],
  ['microsoft-identity', 'https://login.microsoftonline.com/common/discovery/keys', 'v1 path'],
  ['zoho-desk', 'https://desk.zoho.co/.well-known/jwks.json', 'an unlisted domain'],
  ['paypal-certificate', 'https://api.paypal.com/v1/notifications/other/CERT-1', 'another path'],
  ['paypal-certificate', 'https://api.paypal.com/v1/notifications/certs/../../oauth2', 'a climbing path'],
  ['paypal-certificate', 'https://www.paypal.com/v1/notifications/certs/CERT-1', 'another PayPal host'],
  ['plaid', 'https://development.plaid.com/webhook_verification_key/get', 'a retired environment'],
];

describe('key URL allow-list (contract §10.1 F)', () => {
  test.each(allowed)('%s allows %s', (source, url) => {
    expect(allowedKeyUrl(source, url)?.hostname).toBe(new URL(url).hostname);
  });

  test.each(refused)('%s refuses %s (%s)', (source, url) => {
    expect(allowedKeyUrl(source, url)).toBeUndefined();
  });
});
