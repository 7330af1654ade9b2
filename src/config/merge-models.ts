/**
 * How a user file's `models:` list combines with the defaults. An entry whose `match` is already
 * in the defaults changes only the fields it gives, in place (so more specific defaults keep
 * winning over it); any other entry goes in front of the defaults, in the file's order, and takes
 * the fields it leaves out from the default entry that would otherwise serve its pattern.
 */
import { globToRegExp } from '../util/glob.ts'

type Entry = Record<string, unknown>

export function mergeModelLists(defaults: unknown, user: unknown, problems: string[]): unknown {
  if (!Array.isArray(user)) {
    problems.push('models: must be a list of entries (each with a match glob)')
    return defaults
  }
  const base: Entry[] = Array.isArray(defaults) ? defaults.filter(isEntry).map((entry) => ({ ...entry })) : []
  const added: unknown[] = []
  for (const entry of user) {
    if (!isEntry(entry) || typeof entry['match'] !== 'string') {
      // Left for the schema to describe, with its position.
      added.push(entry)
      continue
    }
    const match = entry['match']
    const same = base.findIndex((candidate) => candidate['match'] === match)
    if (same !== -1) base[same] = { ...base[same], ...entry }
    else added.push({ ...defaultsServing(base, match), ...entry })
  }
  return [...added, ...base]
}

/** The default entry the lookup would pick for a model literally named like the pattern. */
function defaultsServing(base: readonly Entry[], pattern: string): Entry {
  const serving = base.find(
    (candidate) => typeof candidate['match'] === 'string' && globToRegExp(candidate['match']).test(pattern),
  )
  return serving ? { ...serving } : {}
}

function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
