/**
 * Which old tool inputs are superseded (docs/quality.md, "Old tool inputs"): a write or edit whose
 * file a later call in the request writes or edits again. Its strings are then neither the file as
 * it is nor the agent's newest change to it, so clearing them hides the least the agent may quote
 * back; replay's own-input count (src/replay/hidden/own-inputs.ts) measured the other inputs, a
 * command's script or an Edit's text the agent builds on next, hidden far more often for little room.
 */
import { pathOf, patchFileLine, type ClearableInput } from './cleared-input.ts'
import { callTarget } from './tool-kind.ts'

/** One call whose input may be cleared: its id, tool name and input as the adapter found it. */
export interface WritingCall {
  readonly id: string
  readonly name: string
  readonly clearable: ClearableInput
}

/** Ids of the calls (in conversation order) whose written file a later call of the list writes again. */
export function supersededWrites(calls: readonly WritingCall[]): Set<string> {
  const superseded = new Set<string>()
  const writtenLater = new Set<string>()
  for (let index = calls.length - 1; index >= 0; index--) {
    const call = calls[index] as WritingCall
    const file = writtenFile(call.name, call.clearable)
    if (file === undefined) continue
    if (writtenLater.has(file)) superseded.add(call.id)
    else writtenLater.add(file)
  }
  return superseded
}

/** The file a call writes or edits, when it is a write and names one (a patch: its first file line); else undefined. */
export function writtenFile(name: string, input: ClearableInput): string | undefined {
  if (input.form === 'text') return typeof input.value === 'string' ? patchFileLine.exec(input.value)?.[1] : undefined
  const value = input.form === 'json' ? parsedJson(input.value) : input.value
  return callTarget(name, value).kind === 'edit' ? pathOf(name, value) : undefined
}

function parsedJson(text: unknown): unknown {
  if (typeof text !== 'string') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
