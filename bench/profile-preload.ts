// Loaded with `--require` into a benchmarked server: the first SIGUSR2 starts V8's CPU
// profiler (or, with BENCH_PROFILE_HEAP=1, its sampling heap profiler, collected objects
// included), the second writes the profile to $BENCH_PROFILE_FILE, so start-up and warm-up
// stay out of it (`--cpu-prof` records the whole life of the process).
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
const heap = process.env.BENCH_PROFILE_HEAP === '1';
let profiling = false;

function save(error: Error | null, profile: unknown): void {
  const file = process.env.BENCH_PROFILE_FILE!;
  writeFileSync(`${file}.partial`, error ? JSON.stringify({ error: error.message }) : JSON.stringify(profile));
  renameSync(`${file}.partial`, file);
}

process.on('SIGUSR2', () => {
  if (!profiling) {
    profiling = true;
    if (heap) {
      // Every object allocated counts, also those a scavenge frees at once (most of a request's).
      const sampling = { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
      session.post('HeapProfiler.enable', () => session.post('HeapProfiler.startSampling', sampling));
    } else {
      session.post('Profiler.enable', () => session.post('Profiler.start'));
    }
    return;
  }
  if (heap) session.post('HeapProfiler.stopSampling', (error, result) => save(error, result.profile));
  else session.post('Profiler.stop', (error, result) => save(error, result.profile));
});
