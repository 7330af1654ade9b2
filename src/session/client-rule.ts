/**
 * Where known clients compact their own history, so "what it would have cost without ctxgate" is
 * what that client would really have sent: it compacts there instead of growing past its window.
 */
export type ClientRuleName = 'claude-code' | 'codex' | 'opencode'

export interface ClientRule {
  readonly name: ClientRuleName
  /** Prompt tokens at which the client compacts before sending its next request. */
  readonly compactAt: (window: number, maxOutputTokens: number) => number
  /** Where the rule comes from, for the docs and the page. */
  readonly source: string
}

/**
 * Claude Code's own proactive compaction point: window − min(max output, 20,000) − 13,000 (its
 * auto-compact buffer). Its usual max output is past 20,000, so this is window − 33,000; the page
 * uses it for clients whose rule ctxgate does not know. Undefined for a window no larger than that.
 */
export function proactiveCompactPoint(window: number, maxOutputTokens = claudeCodeUsualMaxOutput): number | undefined {
  const point = window - Math.min(maxOutputTokens, claudeCodeOutputReserveCap) - claudeCodeCompactBuffer
  return point > 0 ? point : undefined
}

const claudeCodeOutputReserveCap = 20_000
const claudeCodeCompactBuffer = 13_000
const claudeCodeUsualMaxOutput = 32_000

/** Codex compacts at 90% of the model's context window unless configured lower. */
const codexShare = 0.9
/** opencode reserves the model's output limit, capped at its OUTPUT_TOKEN_MAX of 32,000. */
const opencodeOutputCap = 32_000

export const clientRules: Readonly<Record<ClientRuleName, ClientRule>> = {
  // Measured, not assumed: Claude Code 2.1.197 in `-p` runs grew to the window, was refused for
  // length and compacted on the refusal, every time (docs/counterfactuals.md); its proactive point
  // (proactiveCompactPoint above, CLAUDE_CODE_AUTO_COMPACT_WINDOW) did not fire there.
  'claude-code': {
    name: 'claude-code',
    compactAt: (window) => window,
    source:
      'Claude Code 2.1.197 measured on the mock (bench/claude-code-loop.ts): compacts when the provider refuses the prompt for length at the window',
  },
  codex: {
    name: 'codex',
    compactAt: (window) => Math.floor(window * codexShare),
    // Read in the Codex repository (openai/codex), codex-rs/protocol/src/openai_models.rs.
    source: "Codex CLI's source, codex-rs/protocol, auto_compact_token_limit: 90% of the context window",
  },
  opencode: {
    name: 'opencode',
    compactAt: (window, maxOutput) =>
      window - Math.min(maxOutput > 0 ? maxOutput : opencodeOutputCap, opencodeOutputCap),
    source: 'sst/opencode packages/opencode/src/session/compaction.ts isOverflow: context − min(output limit, 32,000)',
  },
}

/** The rule of a client family (see live/client-family.ts); undefined when ctxgate does not know it. */
export function clientRuleOf(family: string): ClientRule | undefined {
  if (family === 'Claude Code') return clientRules['claude-code']
  if (family === 'Codex CLI' || family === 'Codex') return clientRules.codex
  if (/^opencode$/i.test(family)) return clientRules.opencode
  return undefined
}
