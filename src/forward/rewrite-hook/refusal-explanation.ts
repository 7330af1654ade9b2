/** Where the room for the prompt of one refused request came from. */
export interface PromptRoom {
  /** The model's context window as configured. */
  readonly window: number
  /** What the request reserves for the answer (`max_tokens`, `max_completion_tokens` or `max_output_tokens`). */
  readonly maxOutputTokens: number
  /** The configured budget for this model, in tokens (a fraction already multiplied out). */
  readonly configuredBudget: number
  /** The request's `x-ctxgate-budget` header, when it set one. */
  readonly headerBudget?: number
  /** A limit the upstream named in an earlier refusal, when one is remembered. */
  readonly learnedLimit?: number
  /** The room the planner had, after all of the above. */
  readonly budget: number
  /** The client's family (see live/client-family.ts), for the setting that changes max_tokens. */
  readonly client: string
  /** The name the wire format gives the answer's allowance. */
  readonly outputField: string
}

const count = (tokens: number): string => Math.floor(tokens).toLocaleString('en-US')

/**
 * Client settings that lower what the client reserves for the answer. Claude Code reads
 * CLAUDE_CODE_MAX_OUTPUT_TOKENS (https://code.claude.com/docs/en/env-vars).
 */
const outputSettings: Readonly<Record<string, string>> = {
  'Claude Code': 'Claude Code: set CLAUDE_CODE_MAX_OUTPUT_TOKENS, e.g. 8000',
}

/**
 * The arithmetic behind ctxgate's own too-long answer, in words: the window, what the request
 * reserved for the answer, what was left, which limit bound, and what changes it. It follows the
 * provider's own opening words, which agents match on, so it never starts the message.
 */
export function explainPromptRoom(room: PromptRoom): string {
  const { window, maxOutputTokens, outputField } = room
  const left = Math.max(0, window - maxOutputTokens)
  const parts = [
    `The model's window is ${count(window)} tokens and this request reserves ${outputField} ${count(maxOutputTokens)} of it for the answer, leaving ${count(left)} for the prompt.`,
  ]
  if (room.configuredBudget < left)
    parts.push(`ctxgate's configured budget for this model (models[].budget) is ${count(room.configuredBudget)}.`)
  if (room.headerBudget !== undefined && room.headerBudget < Math.min(left, room.configuredBudget))
    parts.push(`The x-ctxgate-budget header lowers it to ${count(room.headerBudget)}.`)
  if (room.learnedLimit !== undefined && room.learnedLimit - maxOutputTokens < window - maxOutputTokens)
    parts.push(`The upstream said earlier that its limit is ${count(room.learnedLimit)}.`)
  parts.push(`Room for the prompt: ${count(room.budget)}.`)
  const bound = bindingLimit(room, left)
  const setting = outputSettings[room.client]
  if (bound === 'output')
    parts.push(
      `To give the prompt more room, lower ${outputField}${setting ? ` (${setting})` : ''}; see docs/refusals.md in ctxgate.`,
    )
  else if (bound === 'config') parts.push(`To give the prompt more room, raise models[].budget in ctxgate's config.`)
  return parts.join(' ')
}

/** Which limit set the room: the answer's reservation, ctxgate's config, a header, or the upstream. */
function bindingLimit(room: PromptRoom, left: number): 'output' | 'config' | 'header' | 'upstream' {
  const limits: [number, 'output' | 'config' | 'header' | 'upstream'][] = [
    [left, 'output'],
    [room.configuredBudget, 'config'],
    [room.headerBudget ?? Number.POSITIVE_INFINITY, 'header'],
  ]
  const lowest = limits.reduce((best, next) => (next[0] < best[0] ? next : best))
  return room.budget < lowest[0] - 1 ? 'upstream' : lowest[1]
}
