// Where the agent loop's current model-step span is kept, so that the tool calls that step asked for become its
// children (request → model step → tool call → FHIR request), although the step's span has ended by the time the
// tools run. One mutable slot per agent loop, carried in the OpenTelemetry context.
import { context, createContextKey, type Context, type Span } from '@opentelemetry/api';

export interface StepSlot {
  step?: Span;
}

const SLOT = createContextKey('fhir-agent-gateway step slot');

export const withStepSlot = (ctx: Context, slot: StepSlot): Context => ctx.setValue(SLOT, slot);

export const currentStepSlot = (): StepSlot | undefined => context.active().getValue(SLOT) as StepSlot | undefined;
