/**
 * The parse alone (parseReusingElements, with the carried prefix) on a client's growing bodies:
 * the large conversation plus a round per request (bench/latency-bodies.ts), this build's compiled
 * parse beside a baseline build's, alternating which goes first, in one process. Wall time per body.
 * Usage: tsx bench/parse-growing.ts <baseline-dist-folder> [bodies=200] [passes=6]
 *   (each checkout's built dist/; the first pass warms up and is not counted)
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { growingRequest } from './latency-bodies.ts'

type Parse = (text: string) => unknown
const parseFrom = async (dist: string): Promise<Parse> =>
  (
    (await import(pathToFileURL(resolve(dist, 'util/reuse-parsed-elements.js')).href)) as {
      parseReusingElements: Parse
    }
  ).parseReusingElements

const baselineDist = process.argv[2]
if (baselineDist === undefined)
  throw new Error('usage: tsx bench/parse-growing.ts <baseline-dist-folder> [bodies] [passes]')
const bodies = Number(process.argv[3] ?? 200)
const passes = Number(process.argv[4] ?? 6)
const builds: [string, Parse][] = [
  ['this build', await parseFrom(new URL('../dist', import.meta.url).pathname)],
  ['baseline', await parseFrom(baselineDist)],
]
const texts = Array.from({ length: bodies }, (_, index) => JSON.stringify(growingRequest(index)))
const spent = new Map(builds.map(([name]) => [name, 0]))
for (let pass = 0; pass < passes; pass++)
  for (const [index, text] of texts.entries())
    for (const [name, parse] of index % 2 === 0 ? builds : builds.toReversed()) {
      const started = performance.now()
      parse(text)
      if (pass > 0) spent.set(name, (spent.get(name) ?? 0) + performance.now() - started)
    }
console.log('\n| build | µs per growing body |\n|---|---:|')
for (const [name, total] of spent) console.log(`| ${name} | ${((1000 * total) / (bodies * (passes - 1))).toFixed(1)} |`)
