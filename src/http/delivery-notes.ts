import type { Response } from 'express';
import { contextOf, type DeliveryNotes } from './context';

export type { DeliveryNotes } from './context';

/** Adds to what this request's delivery log entry carries. */
export function noteDelivery(res: Response, notes: DeliveryNotes): void {
  Object.assign(contextOf(res).delivery, notes);
}
