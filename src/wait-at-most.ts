/**
 * Waits until `work` settles (fulfilled or rejected) or `ms` have passed, whichever comes
 * first; never rejects. For a start that gives a healthy dependency a moment without letting
 * an unreachable one hold it up.
 */
export async function waitAtMost(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const settled = (work ?? Promise.resolve()).then(
    () => undefined,
    () => undefined,
  );
  await Promise.race([settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
