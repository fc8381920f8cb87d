import { randomUUID } from 'node:crypto';

/** The default id generator: 24 random hex digits (tool call ids are `call_<id>`). Callers take theirs injected. */
export const randomId = (): string => randomUUID().replaceAll('-', '').slice(0, 24);
