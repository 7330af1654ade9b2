import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Registry } from 'prom-client'
import { defaultStreamLimits, LiveEventStreams, type EventStreamLimits } from './event-stream.ts'
import type { LiveRecorder } from './live-recorder.ts'
import { LoginThrottle } from './login-throttle.ts'
import { createPageAuth, type PageAuth } from './page-auth.ts'
import { pageAssets, type AssetName } from './page-assets.ts'
import { livePageHtml, loginPageHtml } from './page-html.ts'
import { sharedSnapshotFrame } from './snapshot-frame.ts'
import { registerStreamMetrics } from './stream-metrics.ts'

export interface LiveRouteDeps {
  readonly recorder: LiveRecorder
  /** The admin token (`metrics.token`); null leaves the page open like /metrics. */
  readonly token: string | null
  /** The /ctxgate/events caps (`live.*`). */
  readonly limits?: Partial<EventStreamLimits>
  /** Where the streams' gauges and counters go. */
  readonly registry?: Registry
  /** The holdout's comparison of finished sessions per kind (docs/holdout.md), as /ctxgate/sessions gives it. */
  readonly holdout?: () => Promise<unknown>
}

/** Scripts and styles from ctxgate's own paths only; no inline script, nothing from elsewhere. */
const pageSecurityHeaders = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const

/** GET /ctxgate/ (the page), /ctxgate/events (its stream), /ctxgate/holdout (the arms compared), /ctxgate/assets/* and POST /ctxgate/login. */
export function registerLiveRoutes(server: FastifyInstance, deps: LiveRouteDeps): void {
  const auth = createPageAuth(deps.token)
  const signIn = signInWith(auth, new LoginThrottle())
  const limits = { ...defaultStreamLimits, ...deps.limits }
  let streams: LiveEventStreams | undefined
  const events = deps.registry ? registerStreamMetrics(deps.registry, () => streams, limits.maxBufferedBytes) : {}
  streams = new LiveEventStreams(limits, events)
  const snapshotFrame = sharedSnapshotFrame(() => deps.recorder.snapshot())
  const open = streams
  const stopUpdates = deps.recorder.onUpdate((update) => open.broadcast(update))
  server.addHook('preClose', async () => {
    stopUpdates()
    open.closeAll()
  })

  void server.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 4_096 },
      (_request, body, done) => done(null, new URLSearchParams(String(body))),
    )
    scope.get('/ctxgate', async (_request, reply) => reply.redirect('/ctxgate/', 308))
    scope.get<{ Querystring: { token?: string } }>('/ctxgate/', async (request, reply) => {
      // A token in the link is traded for the cookie at once, and the address bar loses it.
      if (request.query.token !== undefined) return signIn(request, request.query.token, reply)
      if (!auth.allowed(request.headers)) return loginPage(reply, undefined)
      return reply.headers(pageSecurityHeaders).type('text/html; charset=utf-8').send(livePageHtml())
    })
    scope.post('/ctxgate/login', async (request, reply) => {
      if (crossSite(request))
        return reply.code(403).send({ error: 'sign in from the live page itself: this form was sent by another site' })
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams()
      return signIn(request, form.get('token') ?? undefined, reply)
    })
    scope.get('/ctxgate/events', async (request, reply) => {
      if (!auth.allowed(request.headers))
        return reply.code(401).send({ error: 'the live page needs the admin token: open /ctxgate/ to sign in' })
      return openStream(open, snapshotFrame, request, reply)
    })
    scope.get('/ctxgate/holdout', async (request, reply) => {
      if (!auth.allowed(request.headers))
        return reply.code(401).send({ error: 'the live page needs the admin token: open /ctxgate/ to sign in' })
      return reply.header('cache-control', 'no-store').send({ holdout: (await deps.holdout?.()) ?? [] })
    })
    scope.get<{ Params: { name: string } }>('/ctxgate/assets/:name', async (request, reply) => {
      const assets = pageAssets()
      const name = request.params.name
      if (!Object.hasOwn(assets, name)) return reply.code(404).send({ error: 'no such asset' })
      const asset = assets[name as AssetName]
      return reply
        .headers({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' })
        .type(asset.contentType)
        .send(asset.body)
    })
  })
}

/** The slot is taken before the snapshot is awaited: concurrent opens cannot all pass the cap. */
async function openStream(
  streams: LiveEventStreams,
  snapshotFrame: () => Promise<Buffer>,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  const slot = streams.reserve()
  if (!slot) return reply.code(503).send({ error: 'too many live pages open on this ctxgate; close one and retry' })
  let frame: Buffer
  try {
    frame = await snapshotFrame()
  } catch {
    slot.release()
    return reply.code(503).send({ error: 'the live page could not read its history; retry' })
  }
  if (request.raw.destroyed || reply.raw.destroyed) {
    slot.release()
    return reply
  }
  if (!slot.fits(frame.length)) {
    slot.release()
    return reply
      .code(503)
      .send({ error: 'the live pages open on this ctxgate hold its memory budget (live.maxBufferedBytes); retry soon' })
  }
  reply.hijack()
  slot.open(reply.raw, frame)
  return undefined
}

/** Trades the admin token for the page's cookie; wrong tokens are throttled per address and overall. */
function signInWith(
  auth: PageAuth,
  throttle: LoginThrottle,
): (request: FastifyRequest, presented: string | undefined, reply: FastifyReply) => FastifyReply {
  return (request, presented, reply) => {
    if (!auth.required) return reply.redirect('/ctxgate/', 303)
    const wait = throttle.retryAfterSeconds(request.ip)
    if (wait > 0)
      return reply
        .code(429)
        .header('retry-after', String(wait))
        .headers(pageSecurityHeaders)
        .type('text/html; charset=utf-8')
        .send(loginPageHtml(`Too many wrong tokens; try again in ${wait} s.`))
    const cookie = auth.cookieFor(presented)
    if (!cookie) {
      throttle.failed(request.ip)
      return loginPage(reply, 'That is not the admin token.')
    }
    return reply.header('set-cookie', cookie).header('cache-control', 'no-store').redirect('/ctxgate/', 303)
  }
}

/**
 * A browser says where a form came from: Sec-Fetch-Site (same-origin, or none when typed) where it
 * sends it, else Origin (this page sends `Origin: null` itself, as its referrer policy is no-referrer).
 */
function crossSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site']
  if (site !== undefined) return site !== 'same-origin' && site !== 'none'
  const origin = request.headers.origin
  if (origin === undefined) return false
  if (!URL.canParse(origin)) return true
  return new URL(origin).host.toLowerCase() !== (request.headers.host ?? '').toLowerCase()
}

function loginPage(reply: FastifyReply, message: string | undefined): FastifyReply {
  return reply.code(401).headers(pageSecurityHeaders).type('text/html; charset=utf-8').send(loginPageHtml(message))
}
