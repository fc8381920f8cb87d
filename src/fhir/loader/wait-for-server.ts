// Polls `[base]/metadata` until the server answers, for loads that start alongside the server (docker compose:
// HAPI takes a minute to boot, and its distroless image has no shell or curl for a compose healthcheck).
export interface WaitForServerOptions {
  baseUrl: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  intervalMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  onWaiting?: (reason: string) => void;
}

export async function waitForServer(options: WaitForServerOptions): Promise<void> {
  const {
    baseUrl,
    headers,
    timeoutMs,
    intervalMs = 2000,
    fetch: fetchFn = fetch,
    now = Date.now,
    sleep = (ms) => new Promise((r) => setTimeout(r, ms)),
  } = options;
  const deadline = now() + timeoutMs;
  const url = `${baseUrl.replace(/\/+$/, '')}/metadata`;
  for (;;) {
    let reason: string;
    try {
      const response = await fetchFn(url, {
        headers: { accept: 'application/fhir+json', ...headers },
        signal: AbortSignal.timeout(Math.max(1000, Math.min(10_000, timeoutMs))),
      });
      await response.body?.cancel();
      if (response.ok) return;
      reason = `HTTP ${response.status}`;
    } catch (error) {
      reason = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    }
    if (now() + intervalMs > deadline) throw new Error(`FHIR server at ${url} not ready after ${timeoutMs} ms (${reason})`);
    options.onWaiting?.(reason);
    await sleep(intervalMs);
  }
}
