/** RSA keys and tokens for the JWT family tests, signed with jose as the providers' docs describe. */
import { createHash, createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, type JWK, type JWTPayload } from 'jose';

export interface RsaKey {
  kid: string;
  privateKey: KeyObject;
  publicPem: string;
  jwk: JWK;
}

export function rsaKey(kid: string): RsaKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(), jwk };
}

export function rs256(key: RsaKey, claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT', ...header }).sign(key.privateKey);
}

export const sha256Hex = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** `alg: none`: header and claims, an empty signature. */
export function unsigned(claims: JWTPayload, header: Record<string, unknown> = {}): string {
  return `${b64url({ alg: 'none', typ: 'JWT', ...header })}.${b64url(claims)}.`;
}

/** HS256 with `secret` as the HMAC key (also the RS256-vs-HS256 confusion, when the secret is a public key). */
export function hs256(claims: JWTPayload, secret: string | Buffer, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...header }).sign(Buffer.from(secret));
}

/** HS256 by hand, for keys jose will not sign with (the empty one). */
export function hs256ByHand(claims: JWTPayload, secret: string): string {
  const input = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);
