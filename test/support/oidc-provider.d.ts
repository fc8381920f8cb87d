// oidc-provider 8 ships no types; the tests use its constructor, `callback()`, `use()` and `on()` only.
declare module 'oidc-provider' {
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
    use(middleware: (ctx: { path: string; method: string; status: number }, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: unknown[]) => void): void;
  }
}
