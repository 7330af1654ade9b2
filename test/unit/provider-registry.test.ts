import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { settings } from '../../src/config/sources.ts'
import { modelRoutes, providerForPassthrough, providers, wireFormats } from '../../src/providers/registry.ts'
import { upstreamIds } from '../../src/providers/upstream-ids.ts'

describe('upstreamPath', () => {
  it.each([
    ['anthropic', '', '/v1/messages?beta=true', '/v1/messages?beta=true'],
    ['anthropic', '', '/messages', '/v1/messages'],
    ['anthropic', '/proxy', '/messages/count_tokens?beta=true', '/proxy/v1/messages/count_tokens?beta=true'],
    ['anthropic', '', '/messagesx', '/messagesx'],
    ['anthropic', '/proxy', '/v1/models', '/proxy/v1/models'],
    ['openai', '', '/v1/chat/completions', '/v1/chat/completions'],
    ['openai', '', '/chat/completions', '/v1/chat/completions'],
    ['openai', '', '/responses?x=1', '/v1/responses?x=1'],
    ['openai', '/openai', '/v1?x', '/openai/v1?x'],
    ['openai', '', '/v1beta/thing', '/v1/v1beta/thing'],
  ] as const)('%s with base %j maps %s to %s', (upstream, base, url, expected) => {
    expect(providers[upstream].upstreamPath(base, url)).toBe(expected)
  })
})

describe('providerForPassthrough', () => {
  it('tells shared paths apart by the Anthropic headers', () => {
    const upstreamOf = (path: string, headers: Record<string, string>) => providerForPassthrough(path, headers).upstream
    expect(upstreamOf('/v1/models', { 'anthropic-version': '2023-06-01' })).toBe('anthropic')
    expect(upstreamOf('/v1/models', { authorization: 'Bearer x' })).toBe('openai')
    expect(upstreamOf('/v1/files', { 'x-api-key': 'k' })).toBe('anthropic')
    expect(upstreamOf('/v1/messages/batches', {})).toBe('anthropic')
    expect(upstreamOf('/embeddings', {})).toBe('openai')
  })
})

describe('the registry', () => {
  it('routes every path of every wire format once, to its own format', () => {
    const paths = modelRoutes.map((route) => route.path)
    expect(new Set(paths).size).toBe(paths.length)
    for (const format of wireFormats)
      for (const path of format.paths)
        expect(modelRoutes.find((route) => route.path === path)?.format.name).toBe(format.name)
  })

  it('merges the client betas with the ones ctxgate adds instead of replacing them', () => {
    const merge = providers.anthropic.headerMerges?.['anthropic-beta']
    expect(merge?.('a, b', 'b,c')).toBe('a,b,c')
  })
})

describe('the one list of providers', () => {
  it('gives each upstream a provider, a config section and its URL settings, and nothing else', () => {
    const config = loadConfig({})
    expect(Object.keys(providers)).toEqual([...upstreamIds])
    expect(Object.keys(config.upstreams)).toEqual([...upstreamIds])
    const urlSettings = settings.filter((setting) => setting.path[0] === 'upstreams')
    expect(urlSettings.map((setting) => [setting.path.join('.'), setting.env, setting.flag])).toEqual(
      upstreamIds.map((id) => [`upstreams.${id}.url`, `CTXGATE_${id.toUpperCase()}_URL`, `${id}-url`]),
    )
  })

  it('refuses a config section for an upstream the registry does not list', () => {
    // Typed by the same list, so the type checker refuses the section too: cast to send it anyway.
    const overrides = JSON.parse('{"upstreams":{"gemini":{"url":"http://127.0.0.1:1"}}}') as object
    expect(() => loadConfig({ overrides: overrides as never })).toThrow(/gemini/)
  })
})
