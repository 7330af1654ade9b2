import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { startStack } from '../helpers/stack.ts'

describe('live page on the metrics listener', () => {
  it('is served beside /metrics on the metrics port, with its assets from ctxgate itself', async () => {
    const stack = await startStack({ config: { log: { level: 'silent' }, metrics: { port: 0 } } })
    const admin = Fastify()
    stack.app.registerAdmin(admin)
    await admin.listen({ host: '127.0.0.1', port: 0 })
    const adminUrl = `http://127.0.0.1:${(admin.server.address() as AddressInfo).port}`
    try {
      const page = await request(`${adminUrl}/ctxgate/`)
      expect(page.statusCode).toBe(200)
      expect(page.headers['content-security-policy']).toContain("script-src 'self'")
      const html = await page.body.text()
      expect(html).toContain('src="assets/uplot.js"')
      expect(html).not.toMatch(/(src|href)="https?:/)

      const uplot = await request(`${adminUrl}/ctxgate/assets/uplot.js`)
      expect(uplot.headers['content-type']).toMatch(/^text\/javascript/)
      expect(await uplot.body.text()).toContain('uPlot')
      const missing = await request(`${adminUrl}/ctxgate/assets/..%2Fpackage.json`)
      expect(missing.statusCode).toBe(404)
      await missing.body.dump()

      const redirect = await request(`${adminUrl}/ctxgate`)
      expect(redirect.statusCode).toBe(308)
      expect(redirect.headers['location']).toBe('/ctxgate/')
      await redirect.body.dump()

      // The page lives on the admin listener only; on the proxy port ctxgate's own paths are never forwarded.
      const onProxy = await request(`${stack.proxyUrl}/ctxgate/`)
      expect(onProxy.statusCode).toBe(404)
      await onProxy.body.dump()
      expect(stack.mock.requests).toHaveLength(0)
    } finally {
      await admin.close()
      await stack.close()
    }
  })
})
