import type { IncomingHttpHeaders } from 'node:http'
import type { SessionHints } from '../providers/adapter-contract.ts'

export interface SessionIdentity {
  /** Who: the x-ctxgate-session header, else the client's own id, else a hash of the conversation's start. */
  readonly sessionId: string
  /** Which conversation of that session: sub-agents share their parent's id but not its history. */
  readonly conversationKey: string
}

/** DESIGN §3.7: the first of header, client id, content hash wins. */
export function identify(headers: IncomingHttpHeaders, hints: SessionHints): SessionIdentity {
  const header = headers['x-ctxgate-session']
  const fromHeader = Array.isArray(header) ? header[0] : header
  const sessionId =
    fromHeader && fromHeader.length > 0
      ? fromHeader.slice(0, 200)
      : (hints.explicit?.slice(0, 200) ?? `h-${hints.fingerprint}`)
  return { sessionId, conversationKey: `${sessionId}/${hints.fingerprint}` }
}
