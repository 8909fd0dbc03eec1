import type { Request, Response } from 'express';
import type { AppDeps } from '../app-deps';
import { contextOf } from '../http/context';
import { noteDelivery } from '../http/delivery-notes';
import type { FileStore } from '../files/file-store';
import { classifyContentType } from '../body/content-type';
import type { UploadRequest } from '../ingest/accept-upload';
import type { StoredTrigger } from '../registry/schemas';
import type { IngressGate } from '../ingress/gate';

/**
 * With a file store, a multipart body is parsed while it arrives and its large files stored by
 * reference (contract §12). A request without a body (`Content-Length: 0`, or neither length
 * nor chunks) is read as every empty body is: `{}` (contract §2.4), with or without a store.
 */
export function streamsFiles(deps: AppDeps, req: Request): deps is AppDeps & { files: FileStore } {
  return deps.files !== undefined && hasBody(req) && classifyContentType(req.headers['content-type'])?.kind === 'multipart';
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function uploadRequest(req: Request, res: Response, path: string, trigger: StoredTrigger, gate: IngressGate): UploadRequest {
  return {
    path,
    trigger,
    method: req.method,
    headers: req.headers,
    query: req.query as Record<string, unknown>,
    body: req,
    memory: gate.bodyLease(),
    trace: contextOf(res).trace,
    note: (facts) => noteDelivery(res, facts),
  };
}
