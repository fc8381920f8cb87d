// The limits of one chat request's tool loop (AGENT_MAX_STEPS, AGENT_MAX_TOOL_CALLS, AGENT_DEADLINE_MS).
export interface AgentLimits {
  /** Upstream calls per response. */
  maxSteps: number;
  /** Server-side tool executions per response. */
  maxToolCalls: number;
  /** Wall time for the whole response, tools included. */
  deadlineMs: number;
}
