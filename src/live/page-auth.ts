import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { createTokenCheck } from '../security/tokens.ts'

export const pageCookieName = 'ctxgate_live'

/** How long a sign-in lasts: a working day; then the page asks for the token again. */
export const pageCookieLifetimeMs = 12 * 60 * 60 * 1000

/** Who may see the live page: anyone without an admin token, else a bearer header or the page's cookie. */
export interface PageAuth {
  readonly required: boolean
  allowed(headers: IncomingHttpHeaders): boolean
  /** The Set-Cookie value that lets a browser in, when `presented` is the admin token; else undefined. */
  cookieFor(presented: string | undefined): string | undefined
}

/**
 * The cookie holds its expiry and an HMAC of it keyed by the token, never the token: it opens this
 * page and nothing else, and stops working at its expiry whatever the browser does with Max-Age.
 */
export function createPageAuth(token: string | null, now: () => number = Date.now): PageAuth {
  if (token === null) return { required: false, allowed: () => true, cookieFor: () => undefined }
  const tokenMatches = createTokenCheck([token])
  const sign = (expiresAt: number): Buffer =>
    createHmac('sha256', token).update(`ctxgate live page until ${expiresAt}`).digest()
  const passValid = (value: string | undefined): boolean => {
    const match = /^(\d{1,15})\.([\w-]{43})$/.exec(value ?? '')
    if (!match) return false
    const expiresAt = Number(match[1])
    const presented = Buffer.from(match[2] ?? '', 'base64url')
    const expected = sign(expiresAt)
    return presented.length === expected.length && timingSafeEqual(presented, expected) && expiresAt > now()
  }
  return {
    required: true,
    allowed(headers) {
      const authorization = headers.authorization
      if (authorization?.startsWith('Bearer ') && tokenMatches(authorization.slice(7))) return true
      return passValid(cookieValue(headers.cookie, pageCookieName))
    },
    cookieFor(presented) {
      if (!tokenMatches(presented)) return undefined
      const expiresAt = now() + pageCookieLifetimeMs
      const pass = `${expiresAt}.${sign(expiresAt).toString('base64url')}`
      const maxAge = Math.floor(pageCookieLifetimeMs / 1000)
      return `${pageCookieName}=${pass}; Path=/ctxgate; Max-Age=${maxAge}; HttpOnly; SameSite=Strict`
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
