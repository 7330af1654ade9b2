import { providers } from '../providers/registry.ts'

/** Agents, then each provider's SDKs, known by their user-agent product token, named the way people call them. */
const knownClients: readonly (readonly [RegExp, string])[] = [
  [/^claude-cli$/i, 'Claude Code'],
  [/^claude-code$/i, 'Claude Code'],
  [/^codex[_-]cli[_-]rs$/i, 'Codex CLI'],
  [/^codex/i, 'Codex'],
  ...Object.values(providers).flatMap((provider) => provider.sdkClients ?? []),
]

/**
 * The client's family from its user-agent: the first product token without its version, at most 32
 * plain characters; nothing else of the header is kept.
 */
export function clientFamily(userAgent: string | undefined): string {
  const first = userAgent?.trim().split(/\s+/)[0] ?? ''
  const product = first
    .replace(/\/v?\d[^/]*$/, '')
    .replace(/[^A-Za-z0-9._/-]/g, '')
    .slice(0, 32)
  if (product === '') return 'unknown'
  for (const [pattern, name] of knownClients) if (pattern.test(product)) return name
  return product
}
