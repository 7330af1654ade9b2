import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base'
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base'
import { countTextTokens } from '../../src/mock/token-count.ts'

/**
 * Tool outputs of the kinds agents read, generated deterministically (a seeded generator, no
 * randomness between runs), and three upstream counters the estimator was not fitted to.
 */
const asText = { disallowedSpecial: new Set<string>() }
export const counters: Readonly<Record<string, (text: string) => number>> = {
  mock: countTextTokens,
  o200k: (text) => o200k(text, asText),
  cl100k: (text) => cl100k(text, asText),
}

/** Bytes from a fixed-seed linear congruential generator: the same "random" content every run. */
function bytes(count: number, seed: number): number[] {
  let state = seed >>> 0
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state >>> 24
  })
}
const hexOf = (values: readonly number[]): string => values.map((value) => value.toString(16).padStart(2, '0')).join('')
const base64Of = (values: readonly number[]): string => Buffer.from(values).toString('base64')

const lines = (count: number, line: (index: number) => string): string =>
  Array.from({ length: count }, (_, index) => line(index)).join('\n')

export const contentKinds = {
  prose: (n) =>
    lines(n, (i) => `Step ${i}: the function reads the configuration, checks each field and returns a clear error.`),
  code: (n) =>
    lines(
      n,
      (i) => `        if value_${i} is not None:\n            result.append(transform(value_${i}, strict=True))`,
    ),
  json: (n) =>
    JSON.stringify(
      Array.from({ length: n }, (_, i) => ({
        id: i,
        name: `item_${i}`,
        price: i * 1.25,
        tags: ['a', 'b'],
        ok: i % 2 === 0,
      })),
    ),
  japanese: (n) =>
    lines(
      n,
      (i) =>
        `${String(i + 1).padStart(6)}→ロールバック時に前のフェーズの成果物を自動で復元する。失敗した場合はエラーを返す。`,
    ),
  hexRun: (n) => hexOf(bytes(n * 8, 1)),
  base64: (n) => lines(n, (i) => base64Of(bytes(57, i + 7))),
  gitLog: (n) => lines(n, (i) => `${hexOf(bytes(20, i + 3))} fix: handle an empty list in the parser`),
  lockfile: (n) => lines(n, (i) => `      "integrity": "sha512-${base64Of(bytes(64, i + 11))}",`),
  listing: (n) =>
    lines(
      n,
      (i) =>
        `${i % 3 === 0 ? 'drwxrwxrwx' : '-rw-r--r--'}   ${1 + (i % 9)} root root  ${String((i * 7_919) % 99_999).padStart(5)} Oct ${10 + (i % 20)}  2024 .config${i % 7}`,
    ),
  numbers: (n) =>
    lines(
      n,
      (i) => `${i},${(i * 37_813) % 1_000_003},${((i * 7) % 100) / 4},2024-10-${String((i % 28) + 1).padStart(2, '0')}`,
    ),
  hexdump: (n) =>
    lines(
      n,
      (i) =>
        `${(i * 16).toString(16).padStart(8, '0')}: ${bytes(16, i + 5)
          .map((b) => b.toString(16).padStart(2, '0'))
          .join(' ')}`,
    ),
} satisfies Record<string, (size: number) => string>
