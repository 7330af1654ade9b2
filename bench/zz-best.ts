import { loadRecording } from '../src/replay/importers/load-recording.ts'
import { bestSchedule, scheduleCost } from '../src/replay/best-schedule.ts'
import { buildAnthropicRequests } from '../src/replay/build-requests.ts'
import { toolLoopOf } from '../bench/tool-loop-rounds.ts'
const file = process.argv[2] as string
const conv = loadRecording(file, { uncompacted: false }).conversations[0]!
const bodies = buildAnthropicRequests(conv, { maxTokens: 4096, clientCache: 'rolling', stream: false }).map((r) => JSON.stringify(r.body))
const loop = toolLoopOf(bodies)
for (const keep of [3, 2]) {
  const floor = { keepNewestRounds: keep, startTokens: 100000, shortSessionRequests: 8 }
  const best = bestSchedule(loop, floor)
  console.log('keep', keep, 'best', Math.round(best.billed), 'none', Math.round(scheduleCost(loop, floor, [])), best.batchAt.join(','))
}
console.log('head', loop.head, 'rounds', loop.rounds.length, 'avg result', Math.round(loop.rounds.reduce((s, r) => s + r.result, 0) / loop.rounds.length), 'avg call', Math.round(loop.rounds.reduce((s, r) => s + r.call, 0) / loop.rounds.length), 'cleared', loop.rounds[0]?.clearedResult)
const at = (process.argv[3] ?? '').split(',').filter(Boolean).map(Number)
if (at.length) {
  const floor = { keepNewestRounds: 3, startTokens: 100000, shortSessionRequests: 8 }
  console.log('schedule', Math.round(scheduleCost(loop, floor, at)), (scheduleCost(loop, floor, at) / scheduleCost(loop, floor, [])).toFixed(3))
}
if (at.length && process.argv[4]) {
  // per-request model size with schedule
  const { readFileSync } = await import('node:fs')
  const rows = readFileSync(process.argv[4], 'utf8').split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l))
  const whole = [loop.head]; const clr = [loop.head]
  loop.rounds.forEach((r, i) => { whole.push(whole[i]! + r.call + r.result); clr.push(clr[i]! + r.call + r.clearedResult) })
  let cleared = 0; let sumModel = 0; let sumMock = 0
  for (let t = 1; t <= loop.rounds.length + 1; t++) {
    if (at.includes(t)) cleared = t - 1 - 3
    const rounds = t - 1; const done = Math.min(cleared, rounds)
    const size = clr[done]! + whole[rounds]! - whole[done]!
    const mock = rows[t - 1]?.promptTokens ?? 0
    sumModel += size; sumMock += mock
    if (t % 10 === 0 || at.includes(t)) console.log(t, size, mock, mock - size)
  }
  console.log('sum', sumModel, sumMock)
}
