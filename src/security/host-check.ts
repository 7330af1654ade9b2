import { isIP } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config/schema.ts'

/**
 * Without an admin token, /metrics, /ctxgate/sessions and the live page are open to whoever reaches
 * the port, and DNS rebinding lets a web page the operator visits be such a reader: its requests
 * carry the page's own host name. So they answer only to loopback names, IP literals (a rebinding
 * page is always reached by name) and the names in `server.allowedHosts`.
 */
export function adminHostCheck(
  config: Readonly<Config>,
): ((request: FastifyRequest, reply: FastifyReply) => Promise<void>) | undefined {
  if (config.metrics.token !== null) return undefined
  const allowed = new Set(config.server.allowedHosts.map((name) => name.toLowerCase()))
  return async (request, reply) => {
    if (!isAdminPath(request.url)) return
    const name = hostName(request.headers.host)
    if (name === undefined || isTrustedName(name, allowed)) return
    await reply.code(403).send({
      error:
        `this ctxgate does not answer ${JSON.stringify(name)} on its admin endpoints (a guard against DNS rebinding): ` +
        'use 127.0.0.1 or localhost, add the name to server.allowedHosts (env CTXGATE_ALLOWED_HOSTS), or set an ' +
        'admin token (CTXGATE_ADMIN_TOKEN)',
    })
  }
}

function isAdminPath(url: string): boolean {
  return (
    url === '/metrics' ||
    url.startsWith('/metrics?') ||
    url === '/ctxgate' ||
    url.startsWith('/ctxgate/') ||
    url.startsWith('/ctxgate?')
  )
}

/** The Host header without its port, lower case; undefined when there is none (HTTP/1.0 clients). */
export function hostName(host: string | undefined): string | undefined {
  if (!host) return undefined
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host)
  if (bracketed) return bracketed[1]?.toLowerCase()
  return host.replace(/:\d+$/, '').toLowerCase()
}

export function isTrustedName(name: string, allowed: ReadonlySet<string>): boolean {
  if (isIP(name) !== 0) return true
  if (name === 'localhost' || name.endsWith('.localhost')) return true
  return allowed.has(name) || allowed.has(name.replace(/\.$/, ''))
}
