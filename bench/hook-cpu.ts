/**
 * CPU time of the request-side rewrite hook alone (parse, view, plan, apply, serialize), in one
 * process, interleaved in batches beside a baseline build's hook: the latency bench's two bodies
 * (2 KB, and 300 KB over 150 rounds) re-sent as one conversation, the way a client re-sends its
 * history, and the large one growing by a round per request as a real client's does. CPU time (user + system) rather than wall time, so a busy machine moves both alike.
 * Each build is called as forward.ts calls it: a build that makes the records of a request sent as
 * written after dispatch makes them here right after the hook answers, inside the timed batch (its
 * total CPU; timing the two parts apart per request moved the figures more than they differ).
 * Usage: tsx bench/hook-cpu.ts [requests=400] [baseline-dist-folder] [this-dist-folder]
 *   (the folder is another checkout's built dist/, next to its config/; without it only this build runs;
 *   with the third, this build's compiled dist/ runs instead of src/ through tsx, so both are the same kind of code)
 */
import { hookFromBuild, type BuiltHook } from './hook-from-build.ts'
import { growingRequest, largeRequest, smallRequest } from './latency-bodies.ts'

/** Without the reference vocabulary, as every earlier round measured the hook here, so the figures stay comparable. */
const plain = { reference: false }

const requests = Number(process.argv[2] ?? 400)
const baselineDist = process.argv[3]

const thisDist = process.argv[4]
const hooks: [string, BuiltHook][] = [
  [
    'this build',
    await (thisDist
      ? hookFromBuild(thisDist, 'js', plain)
      : hookFromBuild(new URL('../src', import.meta.url).pathname, 'ts', plain)),
  ],
]
if (baselineDist) hooks.push(['baseline', await hookFromBuild(baselineDist, 'js', plain)])
const same = (body: Buffer) => () => body
const bodies: readonly (readonly [string, (request: number) => Buffer])[] = [
  ['2 KB', same(Buffer.from(JSON.stringify(smallRequest)))],
  ['300 KB / 150 rounds', same(Buffer.from(JSON.stringify(largeRequest())))],
  // A real client's next body is new bytes: its history again plus one more round.
  ['300 KB / 150 rounds, growing', (request) => Buffer.from(JSON.stringify(growingRequest(request)))],
]
const headers = { 'user-agent': 'bench' }
const batch = 20
// As forward.ts calls the hook: the records of a request sent as written are made after dispatch.
const asForwarded = { recordsAfterDispatch: true }

console.log('\n| request | build | CPU ms per request |\n|---|---|---:|')
for (const [label, bodyOf] of bodies) {
  // Each request arrives in its own buffer, as from a socket.
  for (let warm = 0; warm < 50; warm++)
    for (const [, hook] of hooks) {
      const result = await hook(Buffer.from(bodyOf(warm)), headers, asForwarded)
      await result.prepared?.afterDispatch?.()
    }
  const cpu = new Map(hooks.map(([name]) => [name, 0]))
  for (let round = 0; round < requests / batch; round++) {
    // Made before the clock starts; every build gets the same bodies in the same order.
    const sent = Array.from({ length: batch }, (_, index) => bodyOf(50 + round * batch + index))
    // Which build goes first alternates: the second of a pair ran about a tenth slower either way.
    for (const [name, hook] of round % 2 === 0 ? hooks : hooks.toReversed()) {
      const before = process.cpuUsage()
      for (let index = 0; index < batch; index++) {
        const result = await hook(Buffer.from(sent[index] as Buffer), headers, asForwarded)
        if (result.kind !== 'forward') throw new Error(`${name}: the hook refused the bench body`)
        await result.prepared?.afterDispatch?.()
      }
      const spent = process.cpuUsage(before)
      cpu.set(name, (cpu.get(name) ?? 0) + (spent.user + spent.system) / 1000)
    }
  }
  for (const [name, total] of cpu) console.log(`| ${label} | ${name} | ${(total / requests).toFixed(3)} |`)
}
