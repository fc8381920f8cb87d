// What the gateway tells clients about an upstream reply beyond OpenAI's fields, as extension data
// (UpstreamCompletion.extensions, or an `extension` delta at the end of a stream): that the upstream reported no
// usage, and what could be counted instead; or that it reasoned although thinking was disabled.

export type UpstreamNotes = {
  /** The upstream reported no usage: `usage` is absent (non-streamed) or null (the stream's usage chunk). */
  usage_reported?: false;
  /** What the gateway counted itself when the upstream was silent (one stream chunk = one token on that server). */
  usage_counted?: { completion_tokens: number };
  /** `thinking.type` was "disabled" but the upstream reasoned anyway (no switch, or it ignored it); the reasoning was dropped. */
  thinking_ignored?: true;
};

/** Undefined when there is nothing to say, so the common case allocates nothing. */
export function upstreamNotes(o: { usageReported: boolean; countedTokens?: number; thinkingIgnored: boolean }): UpstreamNotes | undefined {
  if (o.usageReported && !o.thinkingIgnored) return undefined;
  const notes: UpstreamNotes = {};
  if (!o.usageReported) {
    notes.usage_reported = false;
    if (o.countedTokens !== undefined) notes.usage_counted = { completion_tokens: o.countedTokens };
  }
  if (o.thinkingIgnored) notes.thinking_ignored = true;
  return notes;
}

/** Reasoning that says something: an empty `<think>\n\n</think>` block is a model not thinking, not ignoring the switch. */
export const isRealReasoning = (text: string): boolean => /\S/.test(text);
