import { errorObjectOf, tokenCount, type LengthRefusal } from '../length-refusal.ts'

/** Anthropic's words, at the start of `error.message`: the measured size, then the window. */
const promptTooLong = /^prompt is too long: (\d+) tokens > (\d+) maximum/
/** The prompt fits but the prompt plus `max_tokens` does not: the prompt's size, then the window. */
const withOutputTooLong = /^input length and `max_tokens` exceed context limit: (\d+) \+ \d+ > (\d+)/

/** An Anthropic 400 that refused the prompt for its length, read from `error.message` alone. */
export function readAnthropicLengthRefusal(body: Buffer): LengthRefusal | undefined {
  const message = errorObjectOf(body)?.['message']
  if (typeof message !== 'string') return undefined
  const measured = promptTooLong.exec(message) ?? withOutputTooLong.exec(message)
  if (!measured) return undefined
  const actualTokens = tokenCount(measured[1])
  const limit = tokenCount(measured[2])
  return { ...(actualTokens === undefined ? {} : { actualTokens }), ...(limit === undefined ? {} : { limit }) }
}

/** The API's own opening words for a prompt over its limit (what Claude Code compacts on). */
export function anthropicTooLongWording(promptTokens: number, limit: number): string {
  return `prompt is too long: ${Math.ceil(promptTokens)} tokens > ${Math.floor(limit)} maximum`
}
