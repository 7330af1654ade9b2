/**
 * JSON.parse turns number literals into doubles: `9007199254740993` comes back as …992 and `1e400`
 * as Infinity (written out as `null`). A body ctxgate rewrites must keep every number the client
 * wrote, so literals that would change are swapped for sentinel strings before parsing and put back,
 * as written, after serializing.
 */
export interface ParsedKeepingNumbers {
  readonly value: unknown
  /** Some literals were swapped for sentinels (so `restore` has work to do). */
  readonly kept: boolean
  /** Puts the original literals back into a serialization of `value` (or of something built from it). */
  readonly restore: (serialized: string) => string
  /** Where the top-level members (and the elements of their arrays) are in the body, in bytes; when the scan found them. */
  readonly members?: readonly MemberSpan[]
}

import { isAscii } from 'node:buffer'
import { exactAsDouble } from './double-literal.ts'
import type { MemberSpan } from './json-members.ts'
import { endOfJsonString } from './json-scan.ts'
import { parseReusingElements } from './reuse-parsed-elements.ts'

export { exactAsDouble } from './double-literal.ts'

const unchanged = (serialized: string): string => serialized

/** A cheap look for what could be a risky literal between `:`, `[` or `,` and `,`, `]` or `}`: long digit runs or an exponent. */
const maybeRisky = /(?:^|[:[,])\s*-?(?:\d{16,}(?:\.\d*)?|\d*\.\d{16,}|\d+(?:\.\d+)?[eE][+-]?\d+)\s*(?:[,\]}]|$)/

/** Parses a body's UTF-8 bytes; throws JSON.parse's error when they are not JSON. */
export function parseKeepingNumbers(bytes: Buffer): ParsedKeepingNumbers {
  // The common case, an object with no literal to keep aside: unchanged history is reused as parsed before.
  const reused = parseReusingElements(bytes)
  if (reused !== undefined) return { value: reused.value, kept: false, restore: unchanged, members: reused.members }
  // ASCII reads the same as latin1, which V8 copies without decoding.
  const text = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')
  if (!maybeRisky.test(text)) return { value: JSON.parse(text), kept: false, restore: unchanged }
  const literals: string[] = []
  const nonce = Math.random().toString(36).slice(2, 10)
  const protectedText = replaceRiskyLiterals(text, (literal) => {
    literals.push(literal)
    return `"\\u0000ctxgate-number-${nonce}-${literals.length - 1}"`
  })
  const value: unknown = JSON.parse(protectedText)
  if (literals.length === 0) return { value, kept: false, restore: unchanged }
  const sentinel = new RegExp(`"\\\\u0000ctxgate-number-${nonce}-(\\d+)"`, 'g')
  return {
    value,
    kept: true,
    restore: (serialized) => serialized.replace(sentinel, (_match, index: string) => literals[Number(index)] ?? 'null'),
  }
}

/** Walks the text as JSON tokens (strings skipped whole) and replaces each number literal that a double cannot hold exactly. */
function replaceRiskyLiterals(text: string, replace: (literal: string) => string): string {
  let out = ''
  let copiedTo = 0
  for (let index = 0; index < text.length;) {
    const code = text.charCodeAt(index)
    if (code === 0x22) {
      // An unclosed string runs to the end of the text.
      const end = endOfJsonString(text, index)
      index = end < 0 ? text.length : end
      continue
    }
    if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      const end = endOfNumber(text, index)
      const literal = text.slice(index, end)
      if (!exactAsDouble(literal)) {
        out += text.slice(copiedTo, index) + replace(literal)
        copiedTo = end
      }
      index = end
      continue
    }
    index++
  }
  return copiedTo === 0 ? text : out + text.slice(copiedTo)
}

function endOfNumber(text: string, start: number): number {
  let index = start + 1
  while (index < text.length && /[0-9.eE+-]/.test(text[index] as string)) index++
  return index
}
