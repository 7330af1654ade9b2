import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { clientFamily } from '../../src/live/client-family.ts'
import { liveEventFrom, sessionDigest, type LiveEvent, type LiveSource } from '../../src/live/live-event.ts'
import { LiveHistory } from '../../src/live/live-history.ts'
import { LoginThrottle } from '../../src/live/login-throttle.ts'
import { cookieValue, createPageAuth } from '../../src/live/page-auth.ts'
import { loadConfig } from '../../src/config/load-config.ts'
import { billedDollars, pricesFor } from '../../src/billing/prices.ts'
import {
  addEvent,
  compactPointOf,
  counterFields,
  loopWarningDrops,
  type SessionSummary,
} from '../../src/live/session-summary.ts'
import { zeroUsage, type Usage } from '../../src/model-call/usage.ts'
import { billedEquivalentInput } from '../../src/billing/usage-totals.ts'
import type { RewriteReport } from '../../src/rewrite/types.ts'

const report = (overrides: Partial<RewriteReport> = {}): RewriteReport => ({
  estimatedBefore: 50_000,
  estimatedAfter: 20_000,
  budget: 30_000,
  folded: 2,
  cleared: 4,
  droppedMessages: 0,
  tokensRemoved: { fold: 10_000, clear: 20_000, drop: 0 },
  newBatch: true,
  clientEdited: false,
  firstEditedMessage: 3,
  firstNewEdit: 3,
  ...overrides,
})

const usage = (overrides: Partial<Usage> = {}): Usage => ({
  ...zeroUsage,
  inputTokens: 100,
  cacheReadTokens: 15_000,
  cacheWrite5mTokens: 4_000,
  outputTokens: 300,
  ...overrides,
})

function event(overrides: Partial<LiveEvent> = {}): LiveEvent {
  return {
    at: 1_000,
    session: 'abc',
    client: 'Claude Code',
    model: 'claude-sonnet-4-5',
    route: 'anthropic-messages',
    status: 200,
    durationMs: 10,
    usage: usage(),
    estimatedBefore: 20_000,
    estimatedAfter: 20_000,
    budget: 100_000,
    window: 200_000,
    folded: 0,
    cleared: 0,
    dropped: 0,
    tokensRemoved: 0,
    newBatch: false,
    refusalAvoided: false,
    ...overrides,
  }
}

describe('clientFamily', () => {
  it('keeps the product token without its version and names known agents', () => {
    expect(clientFamily('claude-cli/2.0.14 (external, cli)')).toBe('Claude Code')
    expect(clientFamily('codex_cli_rs/0.50.0 (Mac OS 15.1; arm64) iTerm')).toBe('Codex CLI')
    expect(clientFamily('Anthropic/JS 1.14.0')).toBe('Anthropic SDK (JS)')
    expect(clientFamily('OpenAI/Python 1.99.0')).toBe('OpenAI SDK (Python)')
    expect(clientFamily('my-agent/3.1 extra words')).toBe('my-agent')
    expect(clientFamily(undefined)).toBe('unknown')
    expect(clientFamily('   ')).toBe('unknown')
  })

  it('never returns more than 32 plain characters of whatever was sent', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (header) => {
        const family = clientFamily(header)
        expect(family.length).toBeLessThanOrEqual(32)
        expect(family).toMatch(/^[A-Za-z0-9._/ ()-]+$/)
      }),
    )
  })
})

describe('liveEventFrom', () => {
  const source = (overrides: Partial<LiveSource> = {}): LiveSource => ({
    route: 'anthropic-messages',
    status: 200,
    durationMs: 12.345,
    usage: usage(),
    accounting: {
      model: 'claude-sonnet-4-5',
      sessionId: 'user_secret_session',
      report: report(),
      refusalAvoided: true,
    },
    ...overrides,
  })

  it('keeps counts and labels, a digest of the session id, and the batch reason', () => {
    const live = liveEventFrom(source(), 'claude-cli/2.0.14 (external, cli)', () => 40_000, 5)
    expect(live).toMatchObject({
      at: 5,
      session: sessionDigest('user_secret_session'),
      client: 'Claude Code',
      window: 40_000,
      tokensRemoved: 30_000,
      newBatch: true,
      batchReason: 'over the window: folded 2, cleared 4',
      refusalAvoided: true,
      durationMs: 12.3,
    })
    expect(JSON.stringify(live)).not.toContain('user_secret_session')
  })

  it('names the trigger of a batch: the window, the budget, or an early fold', () => {
    const within = (r: RewriteReport): string | undefined =>
      liveEventFrom(
        source({ accounting: { model: 'm', sessionId: 's', report: r, refusalAvoided: false } }),
        undefined,
        () => 200_000,
        0,
      )?.batchReason
    expect(within(report())).toBe('over budget: folded 2, cleared 4')
    expect(within(report({ estimatedBefore: 10_000, cleared: 0 }))).toBe('early fold: folded 2')
    expect(within(report({ newBatch: false }))).toBeUndefined()
  })

  it("counts this batch's own edits, not the session's running total, under the economy's reason", () => {
    const later = report({ estimatedBefore: 250_000, folded: 0, cleared: 35, newFolded: 0, newCleared: 9 })
    const event = liveEventFrom(
      source({
        accounting: { model: 'm', sessionId: 's', report: later, refusalAvoided: true, batchReason: 'pays_back' },
      }),
      undefined,
      () => 200_000,
      0,
    )
    // The client's prompt is past the window, but the economy made this batch because it pays back.
    expect(event?.batchReason).toBe('pays for its cache rewrite: cleared 9')
    const overBudget = report({ estimatedBefore: 250_000, cleared: 55, newCleared: 20, newFolded: 0, folded: 0 })
    expect(
      liveEventFrom(
        source({
          accounting: {
            model: 'm',
            sessionId: 's',
            report: overBudget,
            refusalAvoided: true,
            batchReason: 'over_budget',
          },
        }),
        undefined,
        () => 200_000,
        0,
      )?.batchReason,
    ).toBe('over the window: cleared 20')
  })

  it('skips requests that are not model calls and counts a refusal avoided only when served', () => {
    expect(liveEventFrom(source({ accounting: undefined }), undefined, () => undefined, 0)).toBeUndefined()
    expect(liveEventFrom(source({ status: 429 }), undefined, () => undefined, 0)?.refusalAvoided).toBe(false)
  })

  it('groups requests without a session id per client and model', () => {
    const anonymous = source({ accounting: { model: 'gpt-5', refusalAvoided: false } })
    const a = liveEventFrom(anonymous, 'OpenAI/JS 6.0.0', () => undefined, 0)
    const b = liveEventFrom(anonymous, 'OpenAI/JS 6.1.0', () => undefined, 0)
    const c = liveEventFrom(anonymous, 'codex_cli_rs/0.5', () => undefined, 0)
    expect(a?.session).toBe(b?.session)
    expect(a?.session).not.toBe(c?.session)
  })
})

describe('prices', () => {
  const table = loadConfig({}).economy.prices
  const priceFor = (model: string) => pricesFor(table, model)

  it('prices a request from the configured table: writes 1.25× and 2× input, reads at the cached price', () => {
    const sonnet = priceFor('claude-sonnet-4-5')
    expect(sonnet).toMatchObject({ input: 3, cacheRead: 0.1, output: 15 })
    const billed = usage({
      inputTokens: 1_000_000,
      cacheWrite5mTokens: 1_000_000,
      cacheWrite1hTokens: 1_000_000,
      cacheReadTokens: 1_000_000,
      outputTokens: 1_000_000,
    })
    expect(billedDollars(billed, sonnet)).toBeCloseTo(3 + 3.75 + 6 + 0.3 + 15)
    expect(billedDollars(billed, sonnet, 2)).toBeCloseTo(2 * (3 + 3.75 + 6 + 0.3) + 15)
    expect(priceFor('claude-opus-4-6').input).toBe(5)
    expect(priceFor('claude-haiku-4-5').output).toBe(5)
    expect(priceFor('gpt-5-mini').input).toBe(0.25)
    expect(priceFor('gpt-5.1').input).toBe(1.25)
    expect(priceFor('gpt-4o').cacheRead).toBe(0.5)
    expect(priceFor('llama-3').input).toBeNull()
  })

  it('shows the configured price on the page: a changed table changes the dollars', () => {
    const listed = addEvent(undefined, event(), table)
    const cheaper = addEvent(undefined, event(), [{ ...priceFor('claude-sonnet-4-5'), input: 1.5, output: 7.5 }])
    expect(listed.dollars).toBeGreaterThan(0)
    expect(cheaper.dollars).toBeCloseTo(listed.dollars / 2)
    expect(addEvent(undefined, event(), []).unpricedRequests).toBe(1)
  })
})

describe('session summaries', () => {
  const eventArbitrary = fc.record({
    status: fc.constantFrom(200, 200, 200, 400, 529),
    before: fc.integer({ min: 0, max: 300_000 }),
    ratio: fc.double({ min: 0.1, max: 1, noNaN: true }),
    read: fc.integer({ min: 0, max: 100_000 }),
    write: fc.integer({ min: 0, max: 20_000 }),
    input: fc.integer({ min: 0, max: 5_000 }),
    batch: fc.boolean(),
    refusal: fc.boolean(),
  })

  it('adds every request: counts, billed-equivalent tokens, and an unedited estimate never below the bill', () => {
    fc.assert(
      fc.property(fc.array(eventArbitrary, { minLength: 1, maxLength: 40 }), (specs) => {
        let summary: SessionSummary | undefined
        const events = specs.map((spec, index) =>
          event({
            at: index,
            status: spec.status,
            usage:
              spec.status === 200
                ? usage({ inputTokens: spec.input, cacheReadTokens: spec.read, cacheWrite5mTokens: spec.write })
                : undefined,
            estimatedBefore: spec.before,
            estimatedAfter: Math.round(spec.before * spec.ratio),
            newBatch: spec.batch,
            refusalAvoided: spec.refusal,
          }),
        )
        for (const item of events) summary = addEvent(summary, item)
        const billed = events.reduce((total, item) => total + (item.usage ? billedEquivalentInput(item.usage) : 0), 0)
        expect(summary?.requests).toBe(events.length)
        expect(summary?.errors).toBe(events.filter((item) => item.status !== 200).length)
        expect(summary?.billedTokens).toBeCloseTo(billed, 6)
        expect(summary?.uneditedBilledTokens).toBeGreaterThanOrEqual((summary?.billedTokens ?? 0) - 1e-6)
        expect(summary?.uneditedDollars).toBeGreaterThanOrEqual((summary?.dollars ?? 0) - 1e-9)
        expect(summary?.editBatches).toBe(events.filter((item) => item.newBatch).length)
        expect(summary?.refusalsAvoided).toBe(events.filter((item) => item.refusalAvoided).length)
        expect(summary?.firstSeen).toBe(0)
        expect(summary?.lastSeen).toBe(events.length - 1)
      }),
    )
  })

  it('counts the requests that dropped whole rounds anew, so the page can warn of a looping session', () => {
    let summary: SessionSummary | undefined
    // A frozen drop re-applied on later requests is not a new one; only new batches with drops count.
    for (let index = 0; index < loopWarningDrops; index++) {
      summary = addEvent(summary, event({ dropped: 12, newBatch: true }))
      summary = addEvent(summary, event({ dropped: 12, newBatch: false }))
    }
    summary = addEvent(summary, event({ cleared: 3, newBatch: true }))
    expect(summary.roundDrops).toBe(loopWarningDrops)
    expect(summary.requests).toBe(2 * loopWarningDrops + 1)
  })

  it('scales the unedited estimate by ctxgate’s before ÷ after', () => {
    const summary = addEvent(undefined, event({ estimatedBefore: 60_000, estimatedAfter: 20_000 }))
    expect(summary.uneditedBilledTokens).toBeCloseTo(3 * summary.billedTokens)
  })

  it('bills a server-side compaction pass beside the answer’s own counts', () => {
    const compaction = { ...zeroUsage, inputTokens: 180_000, cacheReadTokens: 2_000, outputTokens: 3_500 }
    const prices = loadConfig({}).economy.prices
    const plain = addEvent(undefined, event(), prices)
    const compacted = addEvent(undefined, event({ usage: usage({ compaction }) }), prices)
    expect(compacted.billedTokens - plain.billedTokens).toBeCloseTo(180_000 + 0.1 * 2_000)
    expect(compacted.dollars - plain.dollars).toBeCloseTo(
      billedDollars(compaction, pricesFor(prices, 'claude-sonnet-4-5')) ?? Number.NaN,
    )
    expect(compacted.inputTokens).toBe(plain.inputTokens)
  })

  it('counts a compaction avoided when the unedited prompt crosses window − 33,000 and the sent one stays under', () => {
    expect(compactPointOf(200_000)).toBe(167_000)
    expect(compactPointOf(30_000)).toBeUndefined()
    const served = usage({ cacheReadTokens: 100_000, cacheWrite5mTokens: 0, inputTokens: 100 })
    const steps = [150_000, 170_000, 180_000, 120_000, 175_000].map((before, at) =>
      event({ at, estimatedBefore: before, estimatedAfter: 100_100, usage: served }),
    )
    const counts: number[] = []
    let summary: SessionSummary | undefined
    for (const step of steps) {
      summary = addEvent(summary, step)
      counts.push(summary.compactionsAvoided)
    }
    // Crossed at 170k, stayed past at 180k, fell back (the client's history shrank), crossed again at 175k.
    expect(counts).toEqual([0, 1, 1, 1, 2])
    const sentTooMuch = addEvent(
      undefined,
      event({ estimatedBefore: 170_000, usage: usage({ cacheReadTokens: 168_000 }) }),
    )
    expect(sentTooMuch.compactionsAvoided).toBe(0)
  })
})

describe('LiveHistory', () => {
  it('keeps at most M sessions and N requests each, newest first, while totals count every request', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 120 }),
        (maxSessions, maxRequestsPerSession, sessions) => {
          const history = new LiveHistory({ maxSessions, maxRequestsPerSession })
          const sent = new Map<string, number>()
          sessions.forEach((session, at) => {
            history.record(event({ session: `s${session}`, at }))
            sent.set(`s${session}`, (sent.get(`s${session}`) ?? 0) + 1)
          })
          const snapshot = history.snapshot()
          expect(snapshot.sessions.length).toBeLessThanOrEqual(maxSessions)
          const lastSeen = snapshot.sessions.map((view) => view.summary.lastSeen)
          expect(lastSeen).toEqual(lastSeen.toSorted((a, b) => b - a))
          for (const view of snapshot.sessions) {
            expect(view.requests.length).toBeLessThanOrEqual(maxRequestsPerSession)
            expect(view.requests.length).toBe(Math.min(maxRequestsPerSession, view.summary.requests))
            expect(view.requests.at(-1)?.at).toBe(view.summary.lastSeen)
            // Evicted sessions start again, so a kept session counts at most what was sent.
            expect(view.summary.requests).toBeLessThanOrEqual(sent.get(view.summary.session) ?? 0)
          }
          // The newest session is always kept, with everything sent to it since it was last evicted.
          const newest = sessions.at(-1)
          if (newest !== undefined) expect(snapshot.sessions[0]?.summary.session).toBe(`s${newest}`)
        },
      ),
    )
  })

  it('every counter of a summary is a finite number', () => {
    const summary = new LiveHistory().record(event({ usage: undefined, status: 500 }))
    for (const field of counterFields) expect(Number.isFinite(summary[field])).toBe(true)
  })
})

describe('page auth', () => {
  const token = 'admin-token-0123456789abcdef'
  const auth = createPageAuth(token)

  it('lets in a bearer header or the cookie it issued for the token, nothing else', () => {
    const cookie = auth.cookieFor(token)
    expect(cookie).toMatch(/^ctxgate_live=\d+\.[\w-]+; Path=\/ctxgate; Max-Age=43200; HttpOnly; SameSite=Strict$/)
    expect(cookie).not.toContain(token)
    const pass = cookieValue(cookie?.split(';')[0], 'ctxgate_live')
    expect(auth.allowed({ cookie: `other=1; ctxgate_live=${pass}` })).toBe(true)
    expect(auth.allowed({ authorization: `Bearer ${token}` })).toBe(true)
    expect(auth.allowed({ cookie: `ctxgate_live=${token}` })).toBe(false)
    expect(auth.allowed({ authorization: `Bearer ${token}x` })).toBe(false)
    expect(auth.allowed({})).toBe(false)
    expect(auth.cookieFor('wrong')).toBeUndefined()
    expect(auth.cookieFor(undefined)).toBeUndefined()
    // Another token issues another cookie.
    expect(createPageAuth(`${token}!`).cookieFor(`${token}!`)).not.toBe(cookie)
  })

  it('does not let a cookie it issued open the page past its expiry, nor one whose expiry was edited', () => {
    let now = 1_000_000
    const timed = createPageAuth(token, () => now)
    const pass = cookieValue(timed.cookieFor(token)?.split(';')[0], 'ctxgate_live')
    expect(timed.allowed({ cookie: `ctxgate_live=${pass}` })).toBe(true)
    const [expiresAt, signature] = (pass ?? '').split('.')
    expect(timed.allowed({ cookie: `ctxgate_live=${Number(expiresAt) + 1_000_000}.${signature}` })).toBe(false)
    now += 12 * 60 * 60 * 1000
    expect(timed.allowed({ cookie: `ctxgate_live=${pass}` })).toBe(false)
  })

  it('does not let one address, or many together, guess the token quickly', () => {
    let now = 0
    const throttle = new LoginThrottle({ perAddress: 5, overall: 8, windowMs: 60_000 }, () => now)
    for (let attempt = 0; attempt < 5; attempt++) {
      expect(throttle.retryAfterSeconds('10.0.0.1')).toBe(0)
      throttle.failed('10.0.0.1')
    }
    expect(throttle.retryAfterSeconds('10.0.0.1')).toBe(60)
    expect(throttle.retryAfterSeconds('10.0.0.2')).toBe(0)
    for (let attempt = 0; attempt < 3; attempt++) throttle.failed(`10.0.1.${attempt}`)
    expect(throttle.retryAfterSeconds('10.0.0.9')).toBeGreaterThan(0)
    now += 60_001
    expect(throttle.retryAfterSeconds('10.0.0.1')).toBe(0)
    expect(throttle.retryAfterSeconds('10.0.0.9')).toBe(0)
  })

  it('is open when no admin token is configured', () => {
    const open = createPageAuth(null)
    expect(open.required).toBe(false)
    expect(open.allowed({})).toBe(true)
  })
})
