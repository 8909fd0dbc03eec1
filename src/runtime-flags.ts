import { setFlagsFromString } from 'node:v8';

/**
 * V8's allocation-site pretenuring, off. When most objects of one allocation site survive a
 * scavenge, V8 allocates that site's objects straight in the old generation from then on. A
 * server's busiest sites are shared by objects that live for the process and objects that live
 * for one request (node:events' listener arrays: `_addListener` was deoptimised for "dependent
 * allocation site tenuring changed" in the slow runs). V8 decides from a few scavenges' samples,
 * so the decision falls in some runs and not in others; where it fell, the old generation grew by
 * 11.6 MB a scavenge instead of 1.2 and needed a full collection every 2-3 s instead of none.
 *
 * Node 24, embedded, 6-second windows after 50,000 requests (docs/throughput.md, eighth pass):
 * 9 of 44 runs took that way, at 104-157 ms of CPU per 1000 requests (V8's workers 18-40 of it,
 * 3-7 in the others); with pretenuring off none of 29 did, and the other runs cost the same.
 * The long-lived objects pay a copy or two in the young generation instead.
 *
 * Imported first by the process entry, before the code it affects is loaded.
 */
setFlagsFromString('--no-allocation-site-pretenuring');
