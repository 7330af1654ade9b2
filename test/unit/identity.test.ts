import { describe, expect, it } from 'vitest'
import { tenantOf } from '../../src/security/tenant.ts'
import { identify } from '../../src/session/identity.ts'

const token = 'client-token-0123456789abcdef'

describe('session identity under client authentication', () => {
  it('prevents two clients sending the same session id from sharing a conversation key or session', () => {
    const hints = { explicit: 'user_1', fingerprint: 'f1' }
    const a = identify({ 'x-ctxgate-auth': token, 'x-ctxgate-session': 's' }, hints, true)
    const b = identify({ 'x-ctxgate-auth': `${token}-other`, 'x-ctxgate-session': 's' }, hints, true)
    expect(a.sessionId).toBe(`${tenantOf(token)}:s`)
    expect(a.sessionId).not.toBe(b.sessionId)
    expect(a.conversationKey).not.toBe(b.conversationKey)
    expect(a.limitScope).toBe(`tenant:${tenantOf(token)}`)
    // What goes upstream as a cache key stays the client's own id.
    expect(a.clientSessionId).toBe('s')
  })

  it('never puts the token itself in a key, and names a tenant the same way every time', () => {
    const identity = identify({ 'x-ctxgate-auth': token }, { fingerprint: 'f' }, true)
    for (const value of Object.values(identity)) expect(value).not.toContain(token.slice(0, 10))
    expect(tenantOf(token)).toMatch(/^[0-9a-f]{16}$/)
    expect(tenantOf(token)).toBe(tenantOf(token))
  })

  it('without authentication, scopes a learned limit to the conversation and ignores a stray auth header', () => {
    const identity = identify({ 'x-ctxgate-auth': token }, { fingerprint: 'f' }, false)
    expect(identity).toEqual({
      sessionId: 'h-f',
      clientSessionId: 'h-f',
      conversationKey: 'h-f/f',
      limitScope: 'conversation:h-f/f',
    })
  })
})
