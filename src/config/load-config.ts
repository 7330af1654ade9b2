import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'
import { ConfigError } from '../errors.ts'
import { adminExposureProblems } from './admin-exposure.ts'
import { mergeModelLists } from './merge-models.ts'
import { isJsonObject } from '../util/json.ts'
import { configSchema, type Config } from './schema.ts'
import { parseSettingValue, settings } from './sources.ts'

export const defaultConfigPath = fileURLToPath(new URL('../../config/default.yaml', import.meta.url))

export interface ConfigInputs {
  /** Environment variables (pass process.env; nothing else in src reads it). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Command-line flags by name, without the leading dashes. */
  readonly flags?: Readonly<Record<string, string | undefined>>
  /** Values set by code (tests, replay), applied last. */
  readonly overrides?: DeepPartial<Config>
}

export type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends object | null ? DeepPartial<NonNullable<T[K]>> | null : T[K]
}

type Tree = Record<string, unknown>

/** Defaults, then the optional file, then environment, then flags, then overrides; validated once and frozen. */
export function loadConfig(inputs: ConfigInputs = {}): Readonly<Config> {
  const env = inputs.env ?? {}
  const flags = inputs.flags ?? {}
  const problems: string[] = []

  const merged = readYamlFile(defaultConfigPath, problems)
  const extraPath = flags['config'] ?? env['CTXGATE_CONFIG']
  if (extraPath) {
    const { models, ...rest } = readYamlFile(extraPath, problems)
    deepMerge(merged, rest)
    // A user's model list adds to the defaults instead of replacing them (see merge-models.ts).
    if (models !== undefined) merged['models'] = mergeModelLists(merged['models'], models, problems)
  }

  for (const setting of settings) {
    const fromEnv = env[setting.env]
    if (fromEnv !== undefined && fromEnv !== '')
      applySetting(merged, setting.path, parseSettingValue(setting, fromEnv), setting.env, problems)
    const fromFlag = setting.flag ? flags[setting.flag] : undefined
    if (fromFlag !== undefined)
      applySetting(merged, setting.path, parseSettingValue(setting, fromFlag), `--${setting.flag}`, problems)
  }
  if (inputs.overrides) deepMerge(merged, structuredClone(inputs.overrides) as Tree)

  const result = configSchema.safeParse(merged)
  if (!result.success) {
    for (const issue of result.error.issues) problems.push(describeIssue(issue.path, issue.message))
  }
  if (result.success) problems.push(...crossChecks(result.data), ...adminExposureProblems(result.data))
  if (problems.length > 0 || !result.success) throw new ConfigError(problems)
  return deepFreeze(result.data)
}

/** Problems no single field shows: two listeners on one port. */
function crossChecks(config: Config): string[] {
  const { port } = config.server
  if (config.metrics.port === null || config.metrics.port === 0 || config.metrics.port !== port) return []
  return [
    `metrics.port (env CTXGATE_METRICS_PORT, flag --metrics-port) is ${port}, the same as server.port; choose another port, or leave it unset to serve /metrics on the proxy port`,
  ]
}

function describeIssue(path: readonly PropertyKey[], message: string): string {
  const dotted = path.map(String).join('.')
  const setting = settings.find((candidate) => candidate.path.join('.') === dotted)
  const where = setting
    ? `${dotted} (env ${setting.env}${setting.flag ? `, flag --${setting.flag}` : ''})`
    : dotted || '(root)'
  return `${where}: ${message}`
}

function readYamlFile(path: string, problems: string[]): Tree {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    problems.push(
      `config file ${path} could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); check --config / CTXGATE_CONFIG`,
    )
    return {}
  }
  try {
    const parsed: unknown = parseYaml(text)
    if (parsed === null || parsed === undefined) return {}
    if (typeof parsed !== 'object' || Array.isArray(parsed)) {
      problems.push(`config file ${path} must hold a YAML mapping at the top level`)
      return {}
    }
    return parsed as Tree
  } catch (error) {
    problems.push(`config file ${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`)
    return {}
  }
}

function applySetting(
  target: Tree,
  path: readonly string[],
  parsed: { value: unknown } | { problem: string },
  source: string,
  problems: string[],
): void {
  if ('problem' in parsed) {
    problems.push(`${source}: ${parsed.problem}`)
    return
  }
  let node = target
  for (const key of path.slice(0, -1)) {
    const child = node[key]
    if (typeof child !== 'object' || child === null) node[key] = {}
    node = node[key] as Tree
  }
  node[path[path.length - 1] as string] = parsed.value
}

function deepMerge(target: Tree, source: Tree): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key]
    if (isJsonObject(value) && isJsonObject(existing)) deepMerge(existing, value)
    else target[key] = value
  }
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
