import { isJsonObject } from '../../util/json.ts'
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

/** Chat Completions' own opening words for a prompt over the window (read back by the parser above). */
export function chatTooLongWording(promptTokens: number, limit: number): string {
  return `This model's maximum context length is ${Math.floor(limit)} tokens. However, your messages resulted in ${Math.ceil(promptTokens)} tokens.`
}

/** The Responses API names no numbers in its refusal; its own sentence, then ctxgate's explanation with them. */
export function responsesTooLongWording(): string {
  return 'Your input exceeds the context window of this model.'
}

/** The Responses stream's content-free opening events: nothing in them says whether the request is refused. */
export const responsesPreamble: ReadonlySet<string> = new Set(['response.created', 'response.in_progress'])

/**
 * A Responses stream event (an SSE `data` payload or a socket message) that refuses the request for
 * its length: `error` or `response.failed` with code `context_length_exceeded`, where the service
 * puts it (on the event, in its `error`, or in the failed response's `error`). It names no numbers.
 */
export function readResponsesEventRefusal(data: string): LengthRefusal | undefined {
  if (!data.includes('context_length_exceeded')) return undefined
  let event: unknown
  try {
    event = JSON.parse(data)
  } catch {
    return undefined
  }
  if (!isJsonObject(event) || (event['type'] !== 'error' && event['type'] !== 'response.failed')) return undefined
  const response = isJsonObject(event['response']) ? event['response'] : {}
  const codes = [event['code'], codeOf(event['error']), codeOf(response['error'])]
  return codes.includes('context_length_exceeded') ? {} : undefined
}

function codeOf(error: unknown): unknown {
  return isJsonObject(error) ? error['code'] : undefined
}
