import { describe, expect, it } from 'vitest'
import { HistoryBudget } from '../../src/websocket/history-budget.ts'
import { PreparationMemory, reservedAboveBytes } from '../../src/websocket/preparation-memory.ts'

const mib = 1024 * 1024

describe('the room WebSocket preparations take beside the histories kept', () => {
  it('estimates a preparation from its size: nothing below the gate, a worker fixed part plus a multiple above it', () => {
    const memory = new PreparationMemory(new HistoryBudget(1_000 * mib), (bytes) => bytes >= mib)
    expect(memory.workingSet(reservedAboveBytes - 1)).toBe(0)
    const onMain = memory.workingSet(512 * 1024)
    const inWorker = memory.workingSet(2 * mib)
    expect(onMain).toBeGreaterThan(512 * 1024)
    expect(inWorker).toBeGreaterThan(onMain + 2 * mib)
  })

  it('prevents histories and preparations together from passing websocket.maxHistoryBytes: one that does not fit waits for those running, in order', async () => {
    const histories = new HistoryBudget(100 * mib)
    const memory = new PreparationMemory(histories, () => false)
    const size = memory.workingSet(mib)
    expect(histories.resize(0, 100 * mib - 2 * size)).toBe(true)
    const first = await memory.reserve(mib)
    const second = await memory.reserve(mib)
    expect(first && second).toBeTruthy()
    expect(memory.reserved).toBe(2 * size)
    let thirdStarted = false
    const third = memory.reserve(mib).then((release) => ((thirdStarted = true), release))
    await Promise.resolve()
    expect(thirdStarted).toBe(false)
    first?.()
    first?.()
    const release = await third
    expect(release).toBeDefined()
    expect(memory.reserved).toBe(2 * size)
    second?.()
    release?.()
    expect(memory.reserved).toBe(0)
    expect(memory.refusals).toBe(0)
  })

  it('prevents a preparation that cannot fit beside the histories even alone from waiting for good: it is refused and counted, and small ones still go', async () => {
    const histories = new HistoryBudget(20 * mib)
    const memory = new PreparationMemory(histories, () => true)
    expect(await memory.reserve(2 * mib)).toBeUndefined()
    expect(memory.refusals).toBe(1)
    expect(await memory.reserve(1024)).toBeDefined()
    expect(memory.reserved).toBe(0)
  })

  it('refuses one that waited once those running end and it still does not fit', async () => {
    const histories = new HistoryBudget(100 * mib)
    const memory = new PreparationMemory(histories, () => false)
    const size = memory.workingSet(mib)
    const kept = 100 * mib - size - size / 2
    expect(histories.resize(0, kept)).toBe(true)
    const running = await memory.reserve(mib)
    const waiting = memory.reserve(mib)
    // The histories grew meanwhile (a response ended): the waiting one cannot fit even alone.
    expect(histories.resize(kept, 99 * mib)).toBe(true)
    running?.()
    expect(await waiting).toBeUndefined()
    expect(memory.refusals).toBe(1)
  })
})
