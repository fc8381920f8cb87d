/** A setting the gateway cannot start with; the message names it in one line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
