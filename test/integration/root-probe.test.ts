import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { startStack } from '../helpers/stack.ts'

describe('the bare root path', () => {
  it('does not send a client connection probe (Claude Code HEAD /, no credentials) to any upstream', async () => {
    const stack = await startStack({ config: { log: { level: 'silent' } } })
    try {
      const head = await request(`${stack.proxyUrl}/`, { method: 'HEAD', headers: { 'user-agent': 'Bun/1.4.0' } })
      expect(head.statusCode).toBe(200)
      await head.body.dump()
      const get = await request(`${stack.proxyUrl}/`)
      expect(get.statusCode).toBe(200)
      expect(await get.body.json()).toEqual({ service: 'ctxgate', status: 'ok' })
      expect(stack.mock.requests).toHaveLength(0)
      // Any other path is still the upstream's.
      const models = await request(`${stack.proxyUrl}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } })
      await models.body.dump()
      expect(stack.mock.requests.length).toBeGreaterThan(0)
    } finally {
      await stack.close()
    }
  })
})
