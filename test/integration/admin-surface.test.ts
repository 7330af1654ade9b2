import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { startStack } from '../helpers/stack.ts'

const get = async (url: string, host?: string) => {
  const response = await request(url, { headers: host ? { host } : {} })
  return { status: response.statusCode, text: await response.body.text() }
}

describe('the admin surface without an admin token', () => {
  it('does not let a DNS-rebinding page read /metrics, /ctxgate/sessions or the live page under its own host name', async () => {
    const stack = await startStack({
      config: { log: { level: 'silent' }, server: { allowedHosts: ['ctxgate.internal'] } },
    })
    try {
      for (const path of ['/metrics', '/ctxgate/sessions', '/ctxgate/', '/ctxgate/events']) {
        const refused = await get(`${stack.proxyUrl}${path}`, 'attacker.example:8787')
        expect(refused.status).toBe(403)
        expect(refused.text).toContain('DNS rebinding')
        expect(refused.text).toContain('server.allowedHosts')
      }
      for (const host of [
        '127.0.0.1:8787',
        'localhost:8787',
        'LOCALHOST',
        'app.localhost',
        '[::1]:8787',
        '10.0.0.7',
        'ctxgate.internal:9464',
      ])
        expect((await get(`${stack.proxyUrl}/metrics`, host)).status).toBe(200)
      // Health and proxied routes are not admin: they answer whatever the name.
      expect((await get(`${stack.proxyUrl}/healthz`, 'attacker.example')).status).toBe(200)
      expect(stack.mock.requests).toHaveLength(0)
    } finally {
      await stack.close()
    }
  })

  it('answers any host name once an admin token guards the endpoints', async () => {
    const token = 'admin-token-0123456789abcdef'
    const stack = await startStack({ config: { log: { level: 'silent' }, metrics: { token } } })
    try {
      const response = await request(`${stack.proxyUrl}/metrics`, {
        headers: { host: 'ctxgate.example.com', authorization: `Bearer ${token}` },
      })
      expect(response.statusCode).toBe(200)
      await response.body.dump()
    } finally {
      await stack.close()
    }
  })
})

describe('the proxy port when a separate metrics port is set', () => {
  it('does not forward a /metrics scrape upstream: 404 saying where metrics are, and the same for /ctxgate/', async () => {
    const stack = await startStack({ config: { log: { level: 'silent' }, metrics: { port: 9464 } } })
    try {
      for (const path of ['/metrics', '/ctxgate', '/ctxgate/', '/ctxgate/sessions']) {
        const answer = await get(`${stack.proxyUrl}${path}`)
        expect(answer.status).toBe(404)
        expect(answer.text).toContain('metrics port')
        expect(answer.text).toContain('9464')
      }
      expect(stack.mock.requests).toHaveLength(0)
    } finally {
      await stack.close()
    }
  })
})

describe('POST /ctxgate/login', () => {
  const token = 'admin-token-0123456789abcdef'
  const login = (url: string, presented: string, headers: Record<string, string> = {}) =>
    request(`${url}/ctxgate/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ token: presented }).toString(),
    })

  it('does not take a sign-in form sent by another site (Origin or Sec-Fetch-Site)', async () => {
    const stack = await startStack({ config: { log: { level: 'silent' }, metrics: { token } } })
    try {
      const host = new URL(stack.proxyUrl).host
      const crossSiteForms: Record<string, string>[] = [
        { origin: 'https://attacker.example' },
        { origin: 'null' },
        { 'sec-fetch-site': 'cross-site' },
      ]
      for (const headers of crossSiteForms) {
        const refused = await login(stack.proxyUrl, token, headers)
        expect(refused.statusCode).toBe(403)
        expect(refused.headers['set-cookie']).toBeUndefined()
        await refused.body.dump()
      }
      const same = await login(stack.proxyUrl, token, { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' })
      expect(same.statusCode).toBe(303)
      expect(String(same.headers['set-cookie'])).toMatch(/Max-Age=43200/)
      await same.body.dump()
      const cookie = String(same.headers['set-cookie']).split(';')[0]!
      const page = await request(`${stack.proxyUrl}/ctxgate/`, { headers: { cookie } })
      expect(page.statusCode).toBe(200)
      await page.body.dump()
    } finally {
      await stack.close()
    }
  })

  it('does not let one address guess the token at speed: 429 with retry-after after 5 wrong tokens', async () => {
    const stack = await startStack({ config: { log: { level: 'silent' }, metrics: { token } } })
    try {
      const statuses: number[] = []
      for (let attempt = 0; attempt < 7; attempt++) {
        const answer = await login(stack.proxyUrl, `wrong-token-${attempt}-0123456789`)
        statuses.push(answer.statusCode)
        if (answer.statusCode === 429) expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0)
        await answer.body.dump()
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429])
    } finally {
      await stack.close()
    }
  })
})
