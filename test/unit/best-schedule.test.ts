import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { bestSchedule, scheduleCost, type ScheduleFloor, type ToolLoop } from '../../src/replay/best-schedule.ts'

// Head 100; four rounds of a 10-token call and a 100-token result that clears down to 5.
const loop: ToolLoop = {
  head: 100,
  rounds: Array.from({ length: 4 }, () => ({ call: 10, result: 100, clearedResult: 5 })),
}
const keepOne: ScheduleFloor = { keepNewestRounds: 1, startTokens: 0, shortSessionRequests: 0 }

describe('scheduleCost, worked by hand', () => {
  it('prices a run with no batch: each request reads the one before and writes its new round', () => {
    // 1.25×100, then 0.1×(100,210,320,430) + 1.25×110 four times.
    expect(scheduleCost(loop, keepOne, [])).toBeCloseTo(125 + 147.5 + 158.5 + 169.5 + 180.5)
  })

  it('prices a batch as a read up to the first cleared result and a write of the rest', () => {
    // Request 4 clears rounds 1-2: reads head + call 1 (110), writes 240 - 110; request 5 reads 240.
    expect(scheduleCost(loop, keepOne, [4])).toBeCloseTo(125 + 147.5 + 158.5 + (11 + 162.5) + (24 + 137.5))
    // Request 3 clears round 1, request 4 round 2 (reading head + round 1 cleared + call 2 = 125).
    expect(scheduleCost(loop, keepOne, [3, 4])).toBeCloseTo(125 + 147.5 + (11 + 143.75) + (12.5 + 143.75) + 161.5)
  })

  it('starts a batch at the first result it actually shrinks: one no larger than its note stays as it is', () => {
    // Round 1's 5-token result cannot shrink, so the batch at request 4 reads head, round 1 and call 2 (125).
    const tiny: ToolLoop = { ...loop, rounds: [{ call: 10, result: 5, clearedResult: 5 }, ...loop.rounds.slice(1)] }
    expect(scheduleCost(tiny, keepOne, [4])).toBeCloseTo(125 + 28.75 + 149 + (12.5 + 143.75) + 161.5)
  })

  it('refuses a batch the floor does not allow', () => {
    expect(() => scheduleCost(loop, keepOne, [2])).toThrow(RangeError) // nothing older than the newest round yet
    expect(() => scheduleCost(loop, { ...keepOne, startTokens: 400 }, [3])).toThrow(RangeError) // 320 < 400
    expect(() => scheduleCost(loop, { ...keepOne, shortSessionRequests: 5 }, [4])).toThrow(RangeError)
    expect(() => scheduleCost(loop, keepOne, [4, 4])).toThrow(RangeError)
  })
})

describe('bestSchedule', () => {
  it('finds the hand-checked optimum of the worked example: a batch in every request from the third', () => {
    const best = bestSchedule(loop, keepOne)
    expect(best.batchAt).toEqual([3, 4, 5])
    expect(best.billed).toBeCloseTo(125 + 147.5 + 154.75 + 156.25 + 157.75)
  })

  it('keeps everything when the floor allows nothing', () => {
    const best = bestSchedule(loop, { keepNewestRounds: 4, startTokens: 0, shortSessionRequests: 0 })
    expect(best).toEqual({ billed: scheduleCost(loop, keepOne, []), batchAt: [] })
  })

  const loops = fc.record({
    head: fc.integer({ min: 0, max: 5_000 }),
    rounds: fc.array(
      fc
        .record({
          call: fc.integer({ min: 1, max: 300 }),
          result: fc.integer({ min: 1, max: 8_000 }),
          note: fc.integer({ min: 1, max: 60 }),
        })
        .map(({ call, result, note }) => ({ call, result, clearedResult: Math.min(note, result) })),
      { maxLength: 8 },
    ),
  })
  const floors = fc.record({
    keepNewestRounds: fc.integer({ min: 0, max: 4 }),
    startTokens: fc.integer({ min: 0, max: 20_000 }),
    shortSessionRequests: fc.integer({ min: 0, max: 6 }),
  })

  it('is never beaten by any schedule the floor allows (exhaustive on short loops)', () => {
    fc.assert(
      fc.property(loops, floors, (generated, floor) => {
        const best = bestSchedule(generated, floor)
        expect(scheduleCost(generated, floor, best.batchAt)).toBeCloseTo(best.billed, 6)
        const requests = generated.rounds.length + 1
        for (let mask = 0; mask < 1 << requests; mask++) {
          const batchAt = Array.from({ length: requests }, (_, index) => index + 1).filter(
            (request) => mask & (1 << (request - 1)),
          )
          let billed: number
          try {
            billed = scheduleCost(generated, floor, batchAt)
          } catch (error) {
            if (error instanceof RangeError) continue
            throw error
          }
          expect(best.billed).toBeLessThanOrEqual(billed + 1e-6)
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('the quality floor on what a batch may clear', () => {
  // Rounds 1 and 3 read one file (3 re-reads it whole, so 1 becomes superseded); 2 and 4 run a command.
  const call = (id: string, name: string, input: unknown) => ({ id, name, input })
  const calls = [
    call('a', 'Read', { file_path: 'src/app.ts' }),
    call('b', 'Bash', { command: 'ls' }),
    call('c', 'Read', { file_path: 'src/app.ts' }),
    call('d', 'Bash', { command: 'pwd' }),
  ]
  const named: ToolLoop = { ...loop, rounds: loop.rounds.map((round, index) => ({ ...round, tools: [calls[index]!] })) }
  const floor: ScheduleFloor = { ...keepOne, maxNeedHazard: 0.01 }

  it('leaves a read the agent may still quote whole, and clears it once a later read supersedes it', () => {
    // At request 3 round 1 is the only read of its file (hazard 4.85% > 1%): nothing the floor lets go.
    expect(() => scheduleCost(named, floor, [3])).toThrow(RangeError)
    // At request 5 round 1 is superseded and round 2 is command output: both go; round 3, a fresh read, stays.
    // Requests 1-4 as before (600.5); request 5 reads head + call 1 (110) and writes 100 + 15 + 15 + 110 + 110 - 110.
    expect(scheduleCost(named, floor, [5])).toBeCloseTo(600.5 + 11 + 1.25 * 240, 6)
    expect(scheduleCost(named, floor, [5])).toBeGreaterThan(scheduleCost(loop, keepOne, [5]))
    // Without the floor the same batch times are allowed everywhere.
    expect(scheduleCost(named, keepOne, [3, 5])).toBeCloseTo(scheduleCost(loop, keepOne, [3, 5]), 6)
  })

  it('judges a round of parallel calls by its riskiest: a superseded read beside a fresh one stays', () => {
    // Round 1 reads app.ts (superseded by round 3) and, in parallel, util.ts, which nothing reads again.
    const parallel: ToolLoop = {
      ...named,
      rounds: named.rounds.map((round, index) =>
        index === 0 ? { ...round, tools: [calls[0]!, call('a2', 'Read', { file_path: 'src/util.ts' })] } : round,
      ),
    }
    // At request 5 round 1 alone would go (see above); beside the fresh read of util.ts it stays whole,
    // priced as if util.ts were all the round read.
    expect(scheduleCost(parallel, floor, [5])).toBeCloseTo(
      scheduleCost(
        {
          ...named,
          rounds: named.rounds.map((round, index) =>
            index === 0 ? { ...round, tools: [call('a2', 'Read', { file_path: 'src/util.ts' })] } : round,
          ),
        },
        floor,
        [5],
      ),
      6,
    )
  })

  it('keeps a read an edit at the newest round or later will need, as ctxgate would restore it on use', () => {
    // Round 1 reads app.ts; 24 commands follow; round 26 edits app.ts. At request 24 the read is 22 rounds
    // old, rare enough for the floor to let it go, but the edit two rounds on will quote it.
    const editing = (file: string): ToolLoop => ({
      head: 100,
      rounds: Array.from({ length: 26 }, (_, index) => ({
        call: 10,
        result: 100,
        clearedResult: 5,
        tools: [
          index === 0
            ? call('r', 'Read', { file_path: 'src/app.ts' })
            : index === 25
              ? call('e', 'Edit', { file_path: file, old_string: 'a', new_string: 'b' })
              : call(`b${index}`, 'Bash', { command: `make step${index}` }),
        ],
      })),
    })
    const keep: ScheduleFloor = { ...floor, keepReadsEditsNeed: true }
    const readStays = (loop: ToolLoop): ToolLoop => ({
      ...loop,
      rounds: loop.rounds.map((round, index) => (index === 0 ? { ...round, clearedResult: round.result } : round)),
    })
    expect(scheduleCost(editing('src/app.ts'), keep, [24])).toBeCloseTo(
      scheduleCost(readStays(editing('src/app.ts')), floor, [24]),
      6,
    )
    expect(scheduleCost(editing('src/app.ts'), floor, [24])).toBeLessThan(
      scheduleCost(editing('src/app.ts'), keep, [24]),
    )
    // An edit of another file needs nothing: the same batch clears the read.
    expect(scheduleCost(editing('src/other.ts'), keep, [24])).toBeCloseTo(
      scheduleCost(editing('src/other.ts'), floor, [24]),
      6,
    )
  })

  it('never finds a cheaper schedule than the unconstrained floor', () => {
    expect(bestSchedule(named, floor).billed).toBeGreaterThanOrEqual(bestSchedule(named, keepOne).billed - 1e-9)
  })
})
