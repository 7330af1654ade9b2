/**
 * cyrb53: a fast 53-bit string hash, the same on every machine and restart, so frozen decisions keyed
 * by it survive a lost store. Not cryptographic; it only tells contents apart.
 */
export function hashText(text: string, seed = 0): string {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    h1 = Math.imul(h1 ^ code, 2_654_435_761)
    h2 = Math.imul(h2 ^ code, 1_597_334_677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2_246_822_507) ^ Math.imul(h2 ^ (h2 >>> 13), 3_266_489_909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2_246_822_507) ^ Math.imul(h1 ^ (h1 >>> 13), 3_266_489_909)
  return (4_294_967_296 * (2_097_151 & h2) + (h1 >>> 0)).toString(36)
}

/**
 * hashText fed piece by piece: `digest()` after adding texts equals hashText of their concatenation,
 * and adding goes on after a digest, so the hashes of a text and of its prefixes take one walk.
 */
export class TextHasher {
  #h1: number
  #h2: number

  constructor(seed = 0) {
    this.#h1 = 0xdeadbeef ^ seed
    this.#h2 = 0x41c6ce57 ^ seed
  }

  /** A hasher that goes on from a state another one wrote (writeState): what it had added is not walked again. */
  static resumed(h1: number, h2: number): TextHasher {
    const hasher = new TextHasher()
    hasher.#h1 = h1
    hasher.#h2 = h2
    return hasher
  }

  /** Appends the running state (two numbers) to `states`, for resumed(). */
  writeState(states: number[]): void {
    states.push(this.#h1, this.#h2)
  }

  add(text: string): void {
    let h1 = this.#h1
    let h2 = this.#h2
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index)
      h1 = Math.imul(h1 ^ code, 2_654_435_761)
      h2 = Math.imul(h2 ^ code, 1_597_334_677)
    }
    this.#h1 = h1
    this.#h2 = h2
  }

  digest(): string {
    let h1 = this.#h1
    let h2 = this.#h2
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2_246_822_507) ^ Math.imul(h2 ^ (h2 >>> 13), 3_266_489_909)
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2_246_822_507) ^ Math.imul(h1 ^ (h1 >>> 13), 3_266_489_909)
    return (4_294_967_296 * (2_097_151 & h2) + (h1 >>> 0)).toString(36)
  }
}

/** Hash of a content value: strings directly (no JSON copy), anything else as JSON, with different seeds so the two never meet. */
export function contentHash(content: unknown): string {
  return typeof content === 'string' ? hashText(content, 1) : hashText(JSON.stringify(content ?? null), 2)
}
