import { describe, expect, it } from 'vitest'
import { CircuitBreaker } from '../../src/session/circuit-breaker.ts'

function breaker(threshold = 3, cooldownMs = 1_000) {
  let time = 0
  const circuit = new CircuitBreaker({ threshold, cooldownMs, now: () => time })
  return { circuit, advance: (ms: number) => (time += ms) }
}

describe('the store circuit breaker', () => {
  it('prevents a stalled store from costing every request: it opens after the threshold and refuses calls', () => {
    const { circuit } = breaker()
    circuit.failed()
    circuit.failed()
    expect(circuit.state()).toBe('closed')
    expect(circuit.tryAcquire()).toBe(true)
    circuit.failed()
    expect(circuit.state()).toBe('open')
    expect(circuit.tryAcquire()).toBe(false)
  })

  it('counts failures in a row only: a success in between starts over', () => {
    const { circuit } = breaker()
    circuit.failed()
    circuit.failed()
    circuit.succeeded()
    circuit.failed()
    circuit.failed()
    expect(circuit.state()).toBe('closed')
  })

  it('lets exactly one probe through after the cool-down; its success closes, its failure re-opens', () => {
    const { circuit, advance } = breaker(1, 1_000)
    circuit.failed()
    advance(999)
    expect(circuit.tryAcquire()).toBe(false)
    advance(1)
    expect(circuit.state()).toBe('half-open')
    expect(circuit.tryAcquire()).toBe(true)
    expect(circuit.tryAcquire()).toBe(false)
    circuit.failed()
    expect(circuit.state()).toBe('open')
    advance(1_000)
    expect(circuit.tryAcquire()).toBe(true)
    circuit.succeeded()
    expect(circuit.state()).toBe('closed')
    expect(circuit.tryAcquire()).toBe(true)
  })

  it('prevents a stuck half-open circuit: a probe that fails at once frees the slot and re-opens', () => {
    const { circuit, advance } = breaker(1, 1_000)
    circuit.failed()
    advance(1_000)
    expect(circuit.tryAcquire()).toBe(true)
    // The connection dropped meanwhile: the probe is refused at once instead of timing out.
    circuit.failedFast()
    expect(circuit.state()).toBe('open')
    advance(1_000)
    expect(circuit.tryAcquire()).toBe(true)
    circuit.succeeded()
    expect(circuit.state()).toBe('closed')
  })

  it('does not count calls that fail at once while closed', () => {
    const { circuit } = breaker(1, 1_000)
    circuit.failedFast()
    circuit.failedFast()
    expect(circuit.state()).toBe('closed')
  })
})
