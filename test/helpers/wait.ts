/**
 * Waiting for a condition, never for a fixed time. The timeout is only the point at which
 * the test gives up and says what it was waiting for: on a busy machine a condition may take
 * long to come true, so it is generous; the test is as fast as the condition.
 */
export const WAIT_TIMEOUT_MS = 15_000;

/** Resolves once `probe` returns true (polling every few ms); rejects naming `what` after timeoutMs. */
export async function waitUntil(
  probe: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = WAIT_TIMEOUT_MS,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
