import type { FastifyInstance } from 'fastify'
import { settings } from '../config/sources.ts'

/** A start-up failure the user fixes by changing a setting; the CLI prints its message as one line. */
export class StartupError extends Error {}

/**
 * Listens, or explains in one line which setting, variable and flag choose another port when the
 * address is taken or not allowed (instead of Node's stack trace).
 */
export async function listenOrExplain(
  server: FastifyInstance,
  address: { readonly host: string; readonly port: number },
  settingPath: 'server.port' | 'metrics.port',
): Promise<void> {
  try {
    await server.listen(address)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw error
    throw new StartupError(describeListenFailure(code, address, settingPath))
  }
}

export function describeListenFailure(
  code: 'EADDRINUSE' | 'EACCES' | 'EADDRNOTAVAIL',
  address: { readonly host: string; readonly port: number },
  settingPath: 'server.port' | 'metrics.port',
): string {
  const where = `${address.host}:${address.port}`
  if (code === 'EADDRNOTAVAIL')
    return `cannot listen on ${where}: no such address on this machine; set server.host (env ${variableOf('server.host')}, flag --host)`
  const setting = settings.find((candidate) => candidate.path.join('.') === settingPath)
  const how = setting ? `set ${settingPath} (env ${setting.env}${setting.flag ? `, flag --${setting.flag}` : ''})` : ''
  const problem = code === 'EADDRINUSE' ? 'is already in use' : 'needs privileges this process does not have'
  return `${settingPath === 'metrics.port' ? 'metrics port' : 'port'} ${where} ${problem}; ${how} to another port`
}

function variableOf(path: string): string {
  return settings.find((candidate) => candidate.path.join('.') === path)?.env ?? path
}
