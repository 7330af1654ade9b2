import type { FastifyInstance, FastifyReply } from 'fastify'
import { LiveEventStreams } from './event-stream.ts'
import type { LiveRecorder } from './live-recorder.ts'
import { createPageAuth, type PageAuth } from './page-auth.ts'
import { pageAssets, type AssetName } from './page-assets.ts'
import { livePageHtml, loginPageHtml } from './page-html.ts'

export interface LiveRouteDeps {
  readonly recorder: LiveRecorder
  /** The admin token (`metrics.token`); null leaves the page open like /metrics. */
  readonly token: string | null
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
  const streams = new LiveEventStreams()
  const stopUpdates = deps.recorder.onUpdate((update) => streams.broadcast(update))
  server.addHook('preClose', async () => {
    stopUpdates()
    streams.closeAll()
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
      if (request.query.token !== undefined) return signIn(auth, request.query.token, reply)
      if (!auth.allowed(request.headers)) return loginPage(reply, undefined)
      return reply.headers(pageSecurityHeaders).type('text/html; charset=utf-8').send(livePageHtml())
    })
    scope.post('/ctxgate/login', async (request, reply) => {
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams()
      return signIn(auth, form.get('token') ?? undefined, reply)
    })
    scope.get('/ctxgate/events', async (request, reply) => {
      if (!auth.allowed(request.headers))
        return reply.code(401).send({ error: 'the live page needs the admin token: open /ctxgate/ to sign in' })
      if (!streams.hasRoom())
        return reply.code(503).send({ error: 'too many live pages open on this ctxgate; close one and retry' })
      const snapshot = await deps.recorder.snapshot()
      reply.hijack()
      streams.open(reply.raw, snapshot)
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

function signIn(auth: PageAuth, presented: string | undefined, reply: FastifyReply): FastifyReply {
  if (!auth.required) return reply.redirect('/ctxgate/', 303)
  const cookie = auth.cookieFor(presented)
  if (!cookie) return loginPage(reply, 'That is not the admin token.')
  return reply.header('set-cookie', cookie).header('cache-control', 'no-store').redirect('/ctxgate/', 303)
}

function loginPage(reply: FastifyReply, message: string | undefined): FastifyReply {
  return reply.code(401).headers(pageSecurityHeaders).type('text/html; charset=utf-8').send(loginPageHtml(message))
}
