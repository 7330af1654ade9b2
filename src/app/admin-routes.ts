import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createTokenCheck } from '../security/tokens.ts'
import type { Registry } from 'prom-client'
import type { SessionTotalsStore } from '../session/accounting.ts'
import { compareArms } from '../session/holdout-compare.ts'

export interface AdminDeps {
  readonly registry: Registry
  readonly sessions: SessionTotalsStore
  /** When set, every admin route needs `authorization: Bearer <token>`. */
  readonly token: string | null
  /** A session idle this long has finished (the session store's idle TTL): only those enter the holdout's comparison. */
  readonly finishedAfterMs: number
}

/** Sessions the holdout's comparison reads, most recent first: the same bound as the list's largest page. */
export const holdoutSessions = 1_000

/** The operator's endpoints: Prometheus metrics and per-session accounting (on the metrics listener). */
export function registerAdminRoutes(server: FastifyInstance, deps: AdminDeps): void {
  const allowed = createTokenCheck(deps.token === null ? [] : [deps.token])
  const onRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (deps.token === null) return
    const header = request.headers.authorization
    const presented = header?.startsWith('Bearer ') ? header.slice(7) : undefined
    if (!allowed(presented))
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send({ error: 'this endpoint needs authorization: Bearer <CTXGATE_ADMIN_TOKEN>' })
  }
  server.get('/metrics', { onRequest }, async (_request, reply) =>
    reply.type(deps.registry.contentType).send(await deps.registry.metrics()),
  )
  server.get<{ Querystring: { limit?: string } }>('/ctxgate/sessions', { onRequest }, async (request) => {
    const limit = Math.min(1_000, Math.max(1, Number(request.query.limit ?? 100) || 100))
    const sessions = await deps.sessions.list(limit)
    const compared = await deps.sessions.list(holdoutSessions)
    return {
      sessions,
      total: await deps.sessions.count(),
      holdout: compareArms(compared, Date.now(), deps.finishedAfterMs),
    }
  })
  server.get<{ Params: { id: string } }>('/ctxgate/sessions/:id', { onRequest }, async (request, reply) => {
    const totals = await deps.sessions.get(request.params.id)
    if (!totals)
      return reply.code(404).send({
        error: `no session ${JSON.stringify(request.params.id)} (sessions are kept in memory, most recent first)`,
      })
    return totals
  })
}
