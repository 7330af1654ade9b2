import type { IncomingHttpHeaders } from 'node:http'
import type { SessionHints } from '../providers/adapter-contract.ts'
import { tenantOf } from '../security/tenant.ts'

export interface SessionIdentity {
  /**
   * Who: the x-ctxgate-session header, else the client's own id, else a hash of the conversation's
   * start — prefixed with the tenant (`TENANT:ID`) when client authentication is on, so one client
   * can never reach another's state or totals by sending the same id.
   */
  readonly sessionId: string
  /** The id as the client gave it (or the content hash), without the tenant: what goes upstream as a cache key. */
  readonly clientSessionId: string
  /** Which conversation of that session: sub-agents share their parent's id but not its history. */
  readonly conversationKey: string
  /** Where a limit the upstream named applies: the whole tenant when authenticated, else only this conversation. */
  readonly limitScope: string
}

/** docs/rewriting.md (sessions): the first of header, client id, content hash wins; `authenticated` scopes it to the client's token. */
export function identify(headers: IncomingHttpHeaders, hints: SessionHints, authenticated = false): SessionIdentity {
  const header = headers['x-ctxgate-session']
  const fromHeader = Array.isArray(header) ? header[0] : header
  const clientSessionId =
    fromHeader && fromHeader.length > 0
      ? fromHeader.slice(0, 200)
      : (hints.explicit?.slice(0, 200) ?? `h-${hints.fingerprint}`)
  const token = authenticated ? headers['x-ctxgate-auth'] : undefined
  const presented = Array.isArray(token) ? token[0] : token
  const tenant = presented === undefined ? undefined : tenantOf(presented)
  const sessionId = tenant === undefined ? clientSessionId : `${tenant}:${clientSessionId}`
  const conversationKey = `${sessionId}/${hints.fingerprint}`
  return {
    sessionId,
    clientSessionId,
    conversationKey,
    limitScope: tenant === undefined ? `conversation:${conversationKey}` : `tenant:${tenant}`,
  }
}
