/**
 * Reading a client's message on a Responses socket without building the tree of a whole large
 * message: its top-level members are found on the text (the scan the request parser uses), the
 * small ones parsed, and the input list parsed and written back out one item at a time, so the
 * main thread never holds more than one item's tree (a 10 MB input's tree takes several times its
 * size, all of it old-generation garbage by the time it is dropped). The result is what parsing the
 * whole message gives; a message the scan cannot follow (a number literal a double would change, a
 * `__proto__` key, anything malformed) is parsed whole, as before. Pure: no I/O.
 */
import { parseKeepingNumbers } from '../util/exact-numbers.ts'
import { isJsonObject, type Json } from '../util/json.ts'
import { reuseMaxBytes, topLevelMembers, type MemberSpan } from '../util/reuse-parsed-elements.ts'
import { encodeItem } from './conversation.ts'

/** A client's input as items (each item's JSON in a buffer of its own), and its own text when it was a string. */
export interface MessageInput {
  readonly items: readonly Buffer[]
  readonly text?: string
}

export interface ClientMessage {
  /**
   * Every top-level member, parsed, except `input`, which holds `null` in its place (so a request
   * written from these fields puts the input where the client did).
   */
  readonly fields: Json
  /** Undefined when the input is neither a list nor a string (not ours to read); `[]` when absent. */
  readonly input: MessageInput | undefined
  /** Puts back number literals a double could not hold, when some were kept aside as sentinels. */
  readonly restore?: (serialized: string) => string
}

/**
 * The message as JSON; undefined when it is not a JSON object. Only a `response.create`'s input is
 * read. A message the request parser's memo takes is parsed whole: items it saw before come back
 * parsed (cheaper than parsing each again when a client resends its history), and the memo bounds
 * what it keeps. Longer ones, which the memo leaves out, are scanned (`scanAboveBytes` is for tests).
 * Both read the UTF-8 bytes: the message is never decoded as one string unless the scan cannot follow it.
 */
export function readClientMessage(data: Buffer, scanAboveBytes = reuseMaxBytes): ClientMessage | undefined {
  try {
    return (data.length > scanAboveBytes ? scanned(data) : undefined) ?? parsedWhole(data)
  } catch {
    return undefined
  }
}

/** From the scan; undefined when the scan cannot follow the text. Throws when a member is not valid JSON. */
function scanned(bytes: Buffer): ClientMessage | undefined {
  const members = topLevelMembers(bytes)
  if (members === undefined) return undefined
  const fields: Json = {}
  let input: MemberSpan | undefined
  for (const member of members) {
    const key = JSON.parse(bytes.toString('utf8', member.keyStart, member.keyEnd)) as string
    // An own `__proto__` key would set the prototype when assigned: the whole parse makes it a plain property.
    if (key === '__proto__') return undefined
    // As JSON.parse: a repeated key keeps its first place and its last value.
    if (key === 'input') input = member
    fields[key] = key === 'input' ? null : JSON.parse(bytes.toString('utf8', member.valueStart, member.valueEnd))
  }
  if (fields['type'] !== 'response.create') return { fields, input: undefined }
  return { fields, input: input === undefined ? { items: [] } : inputAt(bytes, input) }
}

function inputAt(bytes: Buffer, member: MemberSpan): MessageInput | undefined {
  const elements = member.elements
  if (elements === undefined) return asInput(JSON.parse(bytes.toString('utf8', member.valueStart, member.valueEnd)))
  const items: Buffer[] = []
  for (let index = 0; index < elements.length; index += 2)
    items.push(encodeItem(JSON.parse(bytes.toString('utf8', elements[index] as number, elements[index + 1] as number))))
  return { items }
}

/** The whole text parsed, its number literals kept: the scan's answer for what it cannot follow. */
function parsedWhole(bytes: Buffer): ClientMessage | undefined {
  const parsed = parseKeepingNumbers(bytes)
  if (!isJsonObject(parsed.value)) return undefined
  const fields: Json = { ...parsed.value }
  if ('input' in fields) fields['input'] = null
  if (fields['type'] !== 'response.create') return { fields, input: undefined }
  const input = asInput(parsed.value['input'])
  // Only a response.create's literals can come back in a resend; other messages keep none.
  return { fields, input, ...(parsed.kept ? { restore: parsed.restore } : {}) }
}

/** A string input is one user message; a list is items; absent is none; anything else is not ours to read. */
function asInput(input: unknown): MessageInput | undefined {
  if (typeof input === 'string')
    return { items: [encodeItem({ type: 'message', role: 'user', content: input })], text: input }
  if (input === undefined) return { items: [] }
  return Array.isArray(input) ? { items: input.map(encodeItem) } : undefined
}
