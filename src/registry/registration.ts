import { randomBytes } from 'node:crypto';

/**
 * Each registration of a trigger or channel has an id, minted when it is created and kept by
 * every update (`put` of an id that exists): the delivery log is keyed by it, so a record
 * deleted and registered again, perhaps for another workspace, starts with an empty log
 * (contract §13.1), on every pod, whatever it had cached. It is the first key of the stored
 * JSON, so Redis keeps it in the write script itself (redis-collection.ts), atomic with the put.
 */
interface Registered {
  registrationId?: string;
}

/** 16 characters of base64url (96 random bits). */
export function newRegistrationId(): string {
  return randomBytes(12).toString('base64url');
}

/**
 * What `put` stores over `previous`: `next` with the previous registration's id. A record stored
 * before registrations had ids keeps none (its log stays the path's own).
 */
export function keptRegistration<T>(previous: T | undefined, next: T): T {
  if (previous === undefined) return next;
  const { registrationId: _new, ...rest } = next as T & Registered;
  const kept = (previous as T & Registered).registrationId;
  return (kept === undefined ? rest : { registrationId: kept, ...rest }) as T;
}
