import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CtxgateError, errorCatalogue, type ErrorCode } from '../../src/errors.ts'
import { anthropicErrorShape } from '../../src/providers/anthropic/error-shape.ts'
import { openaiErrorShape } from '../../src/providers/openai/error-shape.ts'

const codes = Object.keys(errorCatalogue) as ErrorCode[]

describe('error catalogue', () => {
  it('documents every code in docs/proxy.md', () => {
    const page = readFileSync(new URL('../../docs/proxy.md', import.meta.url), 'utf8')
    for (const code of codes) expect(page, code).toContain(`\`${code}\``)
  })

  it('recognises its own errors across module copies by brand', () => {
    const error = new CtxgateError('CTXGATE_UPSTREAM_TIMEOUT', 'slow')
    expect(CtxgateError.is(error)).toBe(true)
    expect(CtxgateError.is(new Error('x'))).toBe(false)
    expect(error).toMatchObject({ status: 504, kind: 'timeout' })
  })

  it.each(codes)('%s has a body and a stream frame in both provider shapes', (code) => {
    const { kind } = errorCatalogue[code]
    expect(JSON.parse(anthropicErrorShape.body(kind, 'm'))).toMatchObject({
      type: 'error',
      error: { type: expect.any(String), message: 'm' },
    })
    expect(JSON.parse(openaiErrorShape.body(kind, 'm'))).toMatchObject({
      error: { message: 'm', type: expect.any(String), code: expect.any(String) },
    })
    expect(anthropicErrorShape.streamEvent(kind, 'm')).toMatch(/^event: error\ndata: \{.*\}\n\n$/)
    expect(openaiErrorShape.streamEvent(kind, 'm')).toMatch(/^data: \{"error":.*\}\n\n$/)
  })
})

describe('configuration table', () => {
  it('documents every environment variable and flag in docs/configuration.md', async () => {
    const { settings } = await import('../../src/config/sources.ts')
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
    for (const setting of settings) {
      expect(page, setting.env).toContain(`\`${setting.env}\``)
      if (setting.flag) expect(page, setting.flag).toContain(`\`--${setting.flag}\``)
    }
  })
})
