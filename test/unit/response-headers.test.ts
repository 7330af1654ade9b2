import { validateHeaderValue } from 'node:http'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import type { RewriteReport } from '../../src/rewrite/types.ts'
import { describeRequest, ownResponseHeaders, responseHeadersWanted } from '../../src/forward/response-headers.ts'

const report = (overrides: Partial<RewriteReport> = {}): RewriteReport => ({
  estimatedBefore: 30_000,
  estimatedAfter: 12_000,
  budget: 18_000,
  folded: 2,
  cleared: 3,
  droppedMessages: 0,
  tokensRemoved: { fold: 5_000, clear: 12_500, drop: 500 },
  newBatch: true,
  clientEdited: false,
  firstEditedMessage: 2,
  firstNewEdit: 2,
  ...overrides,
})

const accounting = (rewrite: RewriteReport) => ({
  model: 'claude-sonnet-4-5',
  sessionId: 'task-7',
  report: rewrite,
  refusalAvoided: false,
})

describe('what the headers say', () => {
  it('gives the numbers of a rewritten request and a new batch', () => {
    expect(describeRequest({ accounting: accounting(report()) })).toEqual({
      'x-ctxgate-rewrite': 'rewritten',
      'x-ctxgate-session': 'task-7',
      'x-ctxgate-budget': '18000',
      'x-ctxgate-estimate-before': '30000',
      'x-ctxgate-estimate-after': '12000',
      'x-ctxgate-tokens-removed': '18000',
      'x-ctxgate-edit': 'batch',
    })
  })

  it.each([
    ['none', report({ newBatch: false, firstEditedMessage: -1 }), false],
    ['reapplied', report({ newBatch: false }), false],
    ['batch', report(), false],
    ['refit', report(), true],
  ])('names the edit %s', (edit, rewrite, refitted) => {
    expect(describeRequest({ accounting: accounting(rewrite), refitted })['x-ctxgate-edit']).toBe(edit)
  })

  it('says why a request went on as sent, with no numbers', () => {
    const untouched = { accounting: { model: 'gpt-5', refusalAvoided: false } }
    expect(describeRequest({ ...untouched, log: { rewrite: 'no-model-limits' } })).toEqual({
      'x-ctxgate-rewrite': 'no-model-limits',
    })
    expect(describeRequest({})).toEqual({ 'x-ctxgate-rewrite': 'not-a-chat-request' })
    expect(describeRequest({ failOpen: 'prepare' })).toEqual({ 'x-ctxgate-rewrite': 'failed-open' })
    expect(describeRequest({ accounting: accounting(report()), refused: true })['x-ctxgate-rewrite']).toBe('refused')
  })

  it('only ever writes values Node accepts on a response, whatever the session id', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (sessionId) => {
        const headers = describeRequest({ accounting: { ...accounting(report()), sessionId } })
        for (const [name, value] of Object.entries(headers)) {
          expect(name).toMatch(/^x-ctxgate-[a-z-]+$/)
          expect(() => validateHeaderValue(name, value)).not.toThrow()
        }
        expect(decodeURIComponent(String(headers['x-ctxgate-session']))).toBe(sessionId)
      }),
    )
  })
})

describe('when they are sent', () => {
  it('follows the setting unless the request says otherwise with x-ctxgate-debug', () => {
    expect(responseHeadersWanted(false, {})).toBe(false)
    expect(responseHeadersWanted(true, {})).toBe(true)
    for (const yes of ['1', 'true', 'ON', ' yes '])
      expect(responseHeadersWanted(false, { 'x-ctxgate-debug': yes })).toBe(true)
    for (const no of ['0', 'false', 'off', 'No'])
      expect(responseHeadersWanted(true, { 'x-ctxgate-debug': no })).toBe(false)
    // A value it does not know leaves the setting in charge.
    expect(responseHeadersWanted(false, { 'x-ctxgate-debug': 'verbose' })).toBe(false)
    expect(responseHeadersWanted(true, { 'x-ctxgate-debug': 'verbose' })).toBe(true)
    expect(ownResponseHeaders(false, {}, { accounting: accounting(report()) })).toBeUndefined()
  })

  it('are off by default and turned on by CTXGATE_RESPONSE_HEADERS', () => {
    expect(loadConfig({ env: {} }).server.responseHeaders).toBe(false)
    expect(loadConfig({ env: { CTXGATE_RESPONSE_HEADERS: 'true' } }).server.responseHeaders).toBe(true)
    expect(loadConfig({ env: { CTXGATE_RESPONSE_HEADERS: 'on' } }).server.responseHeaders).toBe(true)
    expect(loadConfig({ env: { CTXGATE_RESPONSE_HEADERS: '0' } }).server.responseHeaders).toBe(false)
  })

  it('refuses a setting that is not a yes or a no, naming it', () => {
    for (const raw of ['maybe', 'constructor'])
      expect(() => loadConfig({ env: { CTXGATE_RESPONSE_HEADERS: raw } })).toThrow(
        /CTXGATE_RESPONSE_HEADERS: expected true or false/,
      )
  })
})
