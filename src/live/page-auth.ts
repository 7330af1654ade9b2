import { createHmac } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { createTokenCheck } from '../security/tokens.ts'

export const pageCookieName = 'ctxgate_live'

/** Who may see the live page: anyone without an admin token, else a bearer header or the page's cookie. */
export interface PageAuth {
  readonly required: boolean
  allowed(headers: IncomingHttpHeaders): boolean
  /** The Set-Cookie value that lets a browser in, when `presented` is the admin token; else undefined. */
  cookieFor(presented: string | undefined): string | undefined
}

export function createPageAuth(token: string | null): PageAuth {
  if (token === null) return { required: false, allowed: () => true, cookieFor: () => undefined }
  const tokenMatches = createTokenCheck([token])
  // The cookie holds a value derived from the token, not the token: it opens this page and nothing else.
  const pass = createHmac('sha256', token).update('ctxgate live page').digest('base64url')
  const passMatches = createTokenCheck([pass])
  return {
    required: true,
    allowed(headers) {
      const authorization = headers.authorization
      if (authorization?.startsWith('Bearer ') && tokenMatches(authorization.slice(7))) return true
      return passMatches(cookieValue(headers.cookie, pageCookieName))
    },
    cookieFor(presented) {
      if (!tokenMatches(presented)) return undefined
      return `${pageCookieName}=${pass}; Path=/ctxgate; HttpOnly; SameSite=Strict`
    },
  }
}

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const separator = part.indexOf('=')
    if (separator !== -1 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim()
  }
  return undefined
}
