import type { MemberSpan } from '../../../src/util/json-members.ts'
import { topLevelMembers } from './json-members.ts'

/** The members the string scan finds in `text`, every offset moved from its characters to its UTF-8 bytes. */
export function stringScanInBytes(text: string): MemberSpan[] | undefined {
  const at = (index: number): number => Buffer.byteLength(text.slice(0, index))
  return topLevelMembers(text)?.map((member) => ({
    keyStart: at(member.keyStart),
    keyEnd: at(member.keyEnd),
    valueStart: at(member.valueStart),
    valueEnd: at(member.valueEnd),
    elements: member.elements?.map(at),
  }))
}
