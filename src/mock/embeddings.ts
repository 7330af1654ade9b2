import { createHash } from 'node:crypto'
import { openaiError } from './openai-chat.ts'
import { countTextTokens } from './token-count.ts'
import type { MockAnswer } from './types.ts'

type Json = Record<string, unknown>

/** Dimensions of the embedding models the mock knows; any other model gets the small one's. */
const dimensionsByModel: Record<string, number> = {
  'text-embedding-3-small': 1_536,
  'text-embedding-3-large': 3_072,
  'text-embedding-ada-002': 1_536,
}
const maxInputs = 2_048

/** A unit vector drawn from the SHA-256 stream of the input: the same text always gets the same vector. */
export function embeddingOf(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions)
  let block = 0
  let bytes = Buffer.alloc(0)
  for (let index = 0; index < dimensions; index++) {
    if (index % 16 === 0) bytes = createHash('sha256').update(`${block++}\u0000${text}`).digest()
    vector[index] = (bytes.readUInt16LE((index % 16) * 2) - 32_767.5) / 32_767.5
  }
  const norm = Math.hypot(...vector) || 1
  return vector.map((value) => value / norm)
}

interface EmbeddingInput {
  readonly key: string
  readonly tokens: number
}

const fromText = (text: string): EmbeddingInput => ({ key: text, tokens: countTextTokens(text) })
const fromTokens = (tokens: number[]): EmbeddingInput => ({ key: `tokens:${tokens.join(',')}`, tokens: tokens.length })
const isTokenArray = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((token) => Number.isInteger(token))

/** Inputs as the API accepts them: a string, strings, a token array, or token arrays. */
function inputsOf(input: unknown): EmbeddingInput[] | undefined {
  if (typeof input === 'string') return input.length > 0 ? [fromText(input)] : undefined
  if (!Array.isArray(input) || input.length === 0) return undefined
  if (isTokenArray(input)) return [fromTokens(input)]
  if (input.every((item) => typeof item === 'string' && item.length > 0)) return (input as string[]).map(fromText)
  if (input.every(isTokenArray)) return input.map(fromTokens)
  return undefined
}

function invalid(message: string, param: string | null, code: string | null = null): MockAnswer {
  return openaiError(400, 'invalid_request_error', message, code, param)
}

/** `POST /v1/embeddings`: deterministic vectors, float or base64 as asked, with usage. */
export function openaiEmbeddings(body: unknown): MockAnswer {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return invalid('We could not parse the JSON body of your request.', null)
  const request = body as Json
  if (typeof request['model'] !== 'string')
    return invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter')
  if (request['input'] === undefined)
    return invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter')
  const inputs = inputsOf(request['input'])
  if (!inputs || inputs.length > maxInputs)
    return invalid("'$.input' is invalid. Please check the API reference.", 'input')
  const model = request['model']
  const dimensions =
    typeof request['dimensions'] === 'number' && request['dimensions'] > 0
      ? Math.floor(request['dimensions'])
      : (dimensionsByModel[model] ?? 1_536)
  const base64 = request['encoding_format'] === 'base64'
  const data = inputs.map((input, index) => {
    const vector = embeddingOf(input.key, dimensions)
    const embedding = base64 ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector)
    return { object: 'embedding', index, embedding }
  })
  const promptTokens = inputs.reduce((sum, input) => sum + input.tokens, 0)
  return {
    status: 200,
    json: { object: 'list', data, model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } },
  }
}
