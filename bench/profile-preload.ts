// Loaded with `--require` into a benchmarked server: the first SIGUSR2 starts V8's CPU
// profiler, the second writes the profile to $BENCH_PROFILE_FILE, so start-up and warm-up
// stay out of it (`--cpu-prof` records the whole life of the process).
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
let profiling = false;

process.on('SIGUSR2', () => {
  if (!profiling) {
    profiling = true;
    session.post('Profiler.enable', () => session.post('Profiler.start'));
    return;
  }
  session.post('Profiler.stop', (error, result) => {
    const file = process.env.BENCH_PROFILE_FILE!;
    writeFileSync(`${file}.partial`, error ? JSON.stringify({ error: error.message }) : JSON.stringify(result.profile));
    renameSync(`${file}.partial`, file);
  });
});
