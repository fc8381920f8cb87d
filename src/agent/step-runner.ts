// What the loop (run-agent-loop.ts) and the streamed step (stream-step.ts) share.
import type { ChatParams, UpstreamCompletion } from '../model/model-upstream.ts';

/** One upstream call: `doGenerate`, or `doStream` collected while its reasoning streams to the client. */
export type StepRunner = (params: ChatParams, ctx: { index: number; signal: AbortSignal }) => Promise<UpstreamCompletion>;

/** Between the reasoning (or content) of two steps, so the client's joined text stays readable. */
export const STEP_SEPARATOR = '\n\n';
