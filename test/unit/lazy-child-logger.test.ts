import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { LazyChildLogger } from '../../src/log/lazy-child-logger.ts'
import { redactedPaths } from '../../src/log/logger.ts'

function capturingLogger(): { logger: pino.Logger; lines: () => Record<string, unknown>[]; children: () => number } {
  const written: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString('utf8'))
      done()
    },
  })
  const logger = pino({ level: 'info', redact: { paths: redactedPaths, censor: '[redacted]' } }, stream)
  let made = 0
  const child = logger.child
  // Children inherit this method (pino makes them with Object.create): it must keep its own `this`.
  logger.child = function (this: pino.Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) {
    made++
    return Reflect.apply(child, this, [bindings, options]) as pino.Logger
  } as unknown as typeof logger.child
  return {
    logger,
    lines: () => written.flatMap((text) => text.trim().split('\n')).map((line) => JSON.parse(line)),
    children: () => made,
  }
}

describe('a request logger made only when used', () => {
  it('makes no child logger for a request that logs nothing', () => {
    const { logger, children } = capturingLogger()
    const lazy = new LazyChildLogger(logger, { reqId: 'req-1' }, {})
    expect(lazy.level).toBe('info')
    expect(children()).toBe(0)
  })

  it('writes the line the eager child would, with the request id, level and redaction, making the child once', () => {
    const { logger, lines, children } = capturingLogger()
    const lazy = new LazyChildLogger(logger, { reqId: 'req-2' }, {})
    lazy.warn({ code: 'CTXGATE_INVALID_REQUEST', headers: { 'x-api-key': 'sk-secret' } }, 'request rejected')
    lazy.debug('below the level')
    lazy.error('second line')
    expect(children()).toBe(1)
    const [first, second] = lines()
    expect(lines()).toHaveLength(2)
    expect(first).toMatchObject({ reqId: 'req-2', level: 40, code: 'CTXGATE_INVALID_REQUEST', msg: 'request rejected' })
    expect(JSON.stringify(first)).not.toContain('sk-secret')
    expect(second).toMatchObject({ reqId: 'req-2', level: 50, msg: 'second line' })
  })

  it('passes bindings on to a child of its own', () => {
    const { logger, lines } = capturingLogger()
    const lazy = new LazyChildLogger(logger, { reqId: 'req-3' }, {})
    lazy.child({ part: 'inner' }).info('from the child')
    expect(lines()[0]).toMatchObject({ reqId: 'req-3', part: 'inner', msg: 'from the child' })
  })
})
