/** Reading and writing the JSON messages of a Responses socket, without parsing more than needed. */

type Json = Record<string, unknown>

/** A client's `model` as a label: only a string is a model name (an object may even lack a usable toString). */
export function modelLabel(model: unknown): string {
  return typeof model === 'string' ? model : 'unknown'
}

export function eventType(data: Buffer): string {
  const type = parseObject(data)?.['type']
  return typeof type === 'string' ? type : ''
}

export function parseObject(data: Buffer): Json | undefined {
  try {
    const value: unknown = JSON.parse(data.toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined
  } catch {
    return undefined
  }
}

/** Requests this large are written in shared memory: a rewrite worker reads them there, with no copy of its own. */
export const sharedAboveBytes = 256 * 1024

/**
 * The message's fields with `input` (already JSON) in its place, without parsing that JSON again.
 * A large one is written in a SharedArrayBuffer: nothing writes to it once written, and the
 * hand-off to a rewrite worker shares it where it would copy a buffer of the main thread's.
 */
export function withInput(fields: Json, input: readonly Buffer[]): Buffer {
  const marker = `\u0000ctxgate-input-${Math.random().toString(36).slice(2)}`
  const text = JSON.stringify({ ...fields, input: marker })
  const at = text.indexOf(JSON.stringify(marker))
  // Written from the parts: the history's items go in as bytes, never as one string of them all.
  const parts = [Buffer.from(text.slice(0, at)), ...input, Buffer.from(text.slice(at + JSON.stringify(marker).length))]
  let length = 0
  for (const part of parts) length += part.length
  if (length < sharedAboveBytes) return Buffer.concat(parts, length)
  const body = Buffer.from(new SharedArrayBuffer(length))
  let offset = 0
  for (const part of parts) offset += part.copy(body, offset)
  return body
}
