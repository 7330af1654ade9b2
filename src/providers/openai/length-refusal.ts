import { errorObjectOf, tokenCount, type LengthRefusal } from '../length-refusal.ts'

/** Chat Completions' classic wording: the window first, then the measured size of the messages. */
const classic = /^This model's maximum context length is (\d+) tokens\. However, your messages resulted in (\d+) tokens/
/** The variant that counts the completion too: the window, then the messages' share of the request. */
const withCompletion =
  /^This model's maximum context length is (\d+) tokens\. However, you requested \d+ tokens \((\d+) in the messages/

/**
 * An OpenAI 400 with `error.code` `context_length_exceeded`. Chat Completions names the numbers in
 * `error.message`; the Responses API ("Your input exceeds the context window of this model…")
 * does not, so that refusal carries none.
 */
export function readOpenAILengthRefusal(body: Buffer): LengthRefusal | undefined {
  const error = errorObjectOf(body)
  if (error?.['code'] !== 'context_length_exceeded') return undefined
  const message = error['message']
  const measured = typeof message === 'string' ? (classic.exec(message) ?? withCompletion.exec(message)) : null
  if (!measured) return {}
  const limit = tokenCount(measured[1])
  const actualTokens = tokenCount(measured[2])
  return { ...(actualTokens === undefined ? {} : { actualTokens }), ...(limit === undefined ? {} : { limit }) }
}
