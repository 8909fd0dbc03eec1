import type { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { Refusal } from '../outcomes/refusal';
import { previewInput } from '../ingest/preview-input';
import { PATH_PATTERN } from '../registry/schemas';
import { ingressGate } from './http-gate';
import { lookup } from './lookup';

/**
 * POST /admin/triggers/{path}/validate: the body is a sample exactly as a sender would send
 * it, so it is read raw (mounted before the admin API's JSON parser), with any content type.
 */
export function validateRoute(router: Router, deps: AppDeps): void {
  router.post('/admin/triggers/:id/validate', async (req, res) => {
    const path = req.params.id as string;
    if (!PATH_PATTERN.test(path)) throw new Refusal('invalid_parameter', 'invalid path', { pattern: PATH_PATTERN.source });
    const trigger = await lookup(deps.registry.triggers, path);
    if (!trigger) throw new Refusal('not_found', 'no such path');
    const gate = ingressGate(deps, req, res, { target: 'admin' });
    const raw = await gate.readBody(deps.config.MAX_BODY_BYTES);
    gate.reserveParseMemory(raw, req.headers['content-type']);
    res.json({ data: await previewInput(deps.config, trigger, raw, req.headers) });
  });
}
