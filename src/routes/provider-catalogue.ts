import type { Router } from 'express';
import { Refusal } from '../outcomes/refusal';
import { catalogue, catalogueEntry } from '../providers/catalogue';
import { providerNamed } from '../providers/registry';

/** GET /admin/providers and /admin/providers/{name} (contract §10); behind the admin token like the rest of /admin. */
export function providerCatalogueRoutes(router: Router): void {
  router.get('/admin/providers', (_req, res) => {
    res.json({ data: catalogue() });
  });
  router.get('/admin/providers/:name', (req, res) => {
    const provider = providerNamed(req.params.name as string);
    if (!provider) throw new Refusal('not_found', 'no such provider');
    res.json({ data: catalogueEntry(provider) });
  });
}
