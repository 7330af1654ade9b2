/**
 * The parse alone (parseReusingElements, with the carried prefix) on a client's growing bodies:
 * the large conversation plus a round per request (bench/latency-bodies.ts), this build's compiled
 * parse beside a baseline build's, alternating which goes first, in one process. Wall time per body,
 * from the body's bytes: a build that parses text (before round 10) has the decode to a string
 * (as its hook did it, `Buffer.toString('latin1')` for ASCII) counted in.
 * Usage: tsx bench/parse-growing.ts <baseline-dist-folder> [bodies=200] [passes=6]
 *   (each checkout's built dist/; the first pass warms up and is not counted)
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { growingRequest } from './latency-bodies.ts'

type Parse = (body: Buffer) => unknown
const parseFrom = async (dist: string): Promise<Parse> => {
  const { parseReusingElements } = (await import(
    pathToFileURL(resolve(dist, 'util/reuse-parsed-elements.js')).href
  )) as {
    parseReusingElements: (input: Buffer | string) => unknown
  }
  // Builds with util/body-text.js decoded the whole body first and parsed the string.
  const readsText = existsSync(resolve(dist, 'util/body-text.js'))
  return readsText ? (body) => parseReusingElements(body.toString('latin1')) : parseReusingElements
}

const baselineDist = process.argv[2]
if (baselineDist === undefined)
  throw new Error('usage: tsx bench/parse-growing.ts <baseline-dist-folder> [bodies] [passes]')
const bodies = Number(process.argv[3] ?? 200)
const passes = Number(process.argv[4] ?? 6)
const builds: [string, Parse][] = [
  ['this build', await parseFrom(new URL('../dist', import.meta.url).pathname)],
  ['baseline', await parseFrom(baselineDist)],
]
const sentBodies = Array.from({ length: bodies }, (_, index) => Buffer.from(JSON.stringify(growingRequest(index))))
const spent = new Map(builds.map(([name]) => [name, 0]))
for (let pass = 0; pass < passes; pass++)
  for (const [index, sent] of sentBodies.entries())
    for (const [name, parse] of index % 2 === 0 ? builds : builds.toReversed()) {
      // Each body arrives in a buffer of its own, as from a socket.
      const body = Buffer.from(sent)
      const started = performance.now()
      parse(body)
      if (pass > 0) spent.set(name, (spent.get(name) ?? 0) + performance.now() - started)
    }
console.log('\n| build | µs per growing body |\n|---|---:|')
for (const [name, total] of spent) console.log(`| ${name} | ${((1000 * total) / (bodies * (passes - 1))).toFixed(1)} |`)
