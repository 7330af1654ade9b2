import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import type { SessionTotalsStore } from '../session/accounting.ts'

export interface AdminDeps {
  readonly registry: Registry
  readonly sessions: SessionTotalsStore
}

/** The operator's endpoints: Prometheus metrics and per-session accounting (on the metrics listener). */
export function registerAdminRoutes(server: FastifyInstance, deps: AdminDeps): void {
  server.get('/metrics', async (_request, reply) => reply.type(deps.registry.contentType).send(await deps.registry.metrics()))
  server.get<{ Querystring: { limit?: string } }>('/ctxgate/sessions', async (request) => {
    const limit = Math.min(1_000, Math.max(1, Number(request.query.limit ?? 100) || 100))
    return { sessions: await deps.sessions.list(limit), total: await deps.sessions.count() }
  })
  server.get<{ Params: { id: string } }>('/ctxgate/sessions/:id', async (request, reply) => {
    const totals = await deps.sessions.get(request.params.id)
    if (!totals) return reply.code(404).send({ error: `no session ${JSON.stringify(request.params.id)} (sessions are kept in memory, most recent first)` })
    return totals
  })
}
