import type { Applied } from '../../providers/adapter-contract.ts'
import { addJsonFields, fieldsAddedOnly } from '../../util/add-json-fields.ts'
import { spliceJsonBytes } from '../../util/splice-json.ts'
import type { HookRequest, ReadChat } from './hook-request.ts'

/**
 * The client's own bytes when nothing changed; else its bytes with only what ctxgate changed written
 * in (a breakpoint is its `cache_control` field, a cleared result its new content), so numbers keep
 * the digits the client wrote, escapes and duplicate keys stay. An adapter that cannot promise
 * shared unchanged parts gets its added top-level fields spliced in, or a serialization of the body.
 */
export function bodyToSend(request: HookRequest, chat: ReadChat, applied: Applied, hideUsageChunk: boolean): Buffer {
  const { original, format } = request
  if (!applied.changed && !hideUsageChunk) return original
  const serialize = (value: unknown): string => chat.restoreNumbers(JSON.stringify(value))
  if (format.adapter.copiesOnWrite === true)
    return spliceJsonBytes(original, chat.json, applied.body, serialize, chat.members)
  const added = fieldsAddedOnly(chat.json, applied.body)
  return added ? addJsonFields(original, added) : Buffer.from(serialize(applied.body))
}
