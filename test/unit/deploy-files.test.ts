import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { describe, expect, it } from 'vitest'
import { settings } from '../../src/config/sources.ts'

const root = new URL('../../', import.meta.url).pathname
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
const ctxgateImage = `ctxgate:${version}`
/** Public images the deployment files may use besides ctxgate's own. */
const thirdParty = [/^redis:7-alpine$/, /^prom\/prometheus:v\d+\.\d+\.\d+$/, /^grafana\/grafana:\d+\.\d+\.\d+$/]
const envNames = new Set([...settings.map((setting) => setting.env), 'CTXGATE_CONFIG'])
const commands = new Set(['serve', 'mock', 'replay', 'demo'])

type Json = Record<string, unknown>

function yamlDocs(path: string): Json[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => {
    expect(doc.errors, path).toEqual([])
    return doc.toJSON() as Json
  })
}

function podSpecOf(doc: Json): Json | undefined {
  return ((doc['spec'] as Json | undefined)?.['template'] as Json | undefined)?.['spec'] as Json | undefined
}

/** Init containers (native sidecars among them) and regular containers. */
function containersOf(doc: Json): Json[] {
  const spec = podSpecOf(doc)
  return [
    ...((spec?.['initContainers'] as Json[] | undefined) ?? []),
    ...((spec?.['containers'] as Json[] | undefined) ?? []),
  ]
}

function kubernetesDocs(): { file: string; doc: Json }[] {
  const directory = join(root, 'deploy/kubernetes')
  return readdirSync(directory, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((file) => yamlDocs(join(directory, file)).map((doc) => ({ file, doc })))
}

function checkCtxgateContainer(container: Json, where: string): void {
  expect(container['image'], where).toBe(ctxgateImage)
  const args = (container['args'] as string[] | undefined) ?? []
  expect(commands.has(args[0] ?? 'serve'), where).toBe(true)
  const env = Object.fromEntries(
    ((container['env'] as Json[] | undefined) ?? []).map((entry) => [String(entry['name']), entry['value']]),
  )
  for (const name of Object.keys(env)) expect(envNames.has(name), `${where}: ${name}`).toBe(true)
  const ports = ((container['ports'] as Json[] | undefined) ?? []).map((port) => port['containerPort'])
  expect(ports).toContain(Number(env['CTXGATE_PORT'] ?? 8787))
  if (env['CTXGATE_METRICS_PORT']) expect(ports).toContain(Number(env['CTXGATE_METRICS_PORT']))
  expect((container['readinessProbe'] as Json)['httpGet']).toMatchObject({ path: '/readyz' })
  expect((container['livenessProbe'] as Json)['httpGet']).toMatchObject({ path: '/healthz' })
  expect(container['resources']).toMatchObject({ requests: expect.any(Object), limits: expect.any(Object) })
  // The kubelet refuses runAsNonRoot with the image's non-numeric user; a numeric one it can verify.
  const security = container['securityContext'] as Json
  expect(security, where).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true })
  expect(Number.isInteger(security['runAsUser']) && Number(security['runAsUser']) > 0, where).toBe(true)
}

describe('deployment files', () => {
  it('Kubernetes manifests parse and reference only ctxgate’s image, env names, ports and paths', () => {
    const directory = join(root, 'deploy/kubernetes')
    const files = readdirSync(directory, { recursive: true })
      .map(String)
      .filter((name) => name.endsWith('.yaml'))
    expect(files.length).toBeGreaterThanOrEqual(3)
    const kinds = new Set<string>()
    for (const file of files) {
      for (const doc of yamlDocs(join(directory, file))) {
        kinds.add(String(doc['kind']))
        const annotations = (
          ((doc['spec'] as Json | undefined)?.['template'] as Json | undefined)?.['metadata'] as Json | undefined
        )?.['annotations'] as Json | undefined
        for (const container of containersOf(doc)) {
          const image = String(container['image'])
          if (container['name'] === 'ctxgate') {
            checkCtxgateContainer(container, `${file}/${String((doc['metadata'] as Json)['name'])}`)
            if (annotations)
              expect(annotations['prometheus.io/port']).toBe(
                String(
                  ((container['env'] as Json[]).find((entry) => entry['name'] === 'CTXGATE_METRICS_PORT') as Json)[
                    'value'
                  ],
                ),
              )
          } else if (container['name'] === 'agent') {
            const env = Object.fromEntries(
              ((container['env'] as Json[] | undefined) ?? []).map((entry) => [entry['name'], entry['value']]),
            )
            expect(env).toMatchObject({
              ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787',
              OPENAI_BASE_URL: 'http://127.0.0.1:8787/v1',
            })
          } else
            expect(
              thirdParty.some((pattern) => pattern.test(image)),
              image,
            ).toBe(true)
        }
      }
    }
    expect([...kinds].toSorted()).toEqual(['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service'])
  })

  it('the shared deployment points every replica at the Redis service it defines', () => {
    const docs = [
      ...yamlDocs(join(root, 'deploy/kubernetes/shared/ctxgate.yaml')),
      ...yamlDocs(join(root, 'deploy/kubernetes/shared/redis.yaml')),
    ]
    const redisService = docs.find(
      (doc) => doc['kind'] === 'Service' && (doc['metadata'] as Json)['name'] === 'ctxgate-redis',
    ) as Json
    const port = ((redisService['spec'] as Json)['ports'] as Json[])[0]?.['port']
    const deployment = docs.find(
      (doc) => doc['kind'] === 'Deployment' && (doc['metadata'] as Json)['name'] === 'ctxgate',
    ) as Json
    expect((deployment['spec'] as Json)['replicas']).toBeGreaterThan(1)
    const container = containersOf(deployment)[0] as Json
    const env = (container['env'] as Json[]).find((entry) => entry['name'] === 'CTXGATE_REDIS_URL')
    expect(env?.['value']).toBe(`redis://ctxgate-redis:${String(port)}`)
    const configMap = docs.find((doc) => doc['kind'] === 'ConfigMap') as Json
    expect(parseAllDocuments(String((configMap['data'] as Json)['ctxgate.yaml']))[0]?.errors).toEqual([])
  })

  it('runs ctxgate as a native sidecar that starts before the agent and stops after it', () => {
    const pods = kubernetesDocs().filter(({ file }) => file.startsWith('sidecar'))
    const deployment = pods.find(({ doc }) => doc['kind'] === 'Deployment')?.doc as Json
    const spec = podSpecOf(deployment) as Json
    const sidecar = ((spec['initContainers'] as Json[] | undefined) ?? []).find((entry) => entry['name'] === 'ctxgate')
    expect(sidecar?.['restartPolicy']).toBe('Always')
    // The agent starts only once this probe passes.
    expect((sidecar?.['startupProbe'] as Json | undefined)?.['httpGet']).toMatchObject({ path: '/healthz' })
    expect((spec['containers'] as Json[]).map((entry) => entry['name'])).toEqual(['agent'])
  })

  it('compose publishes ports on loopback only and gives anonymous Grafana visitors no admin rights', () => {
    const [compose] = yamlDocs(join(root, 'deploy/compose.yaml'))
    const services = (compose as Json)['services'] as Record<string, Json>
    for (const [name, service] of Object.entries(services))
      for (const port of (service['ports'] as string[] | undefined) ?? [])
        expect(port.startsWith('127.0.0.1:'), `${name}: ${port}`).toBe(true)
    const grafana = services['grafana']?.['environment'] as Json
    expect(grafana['GF_AUTH_ANONYMOUS_ORG_ROLE']).toBe('Viewer')
  })

  it('compose parses and mounts files that exist', () => {
    const [compose] = yamlDocs(join(root, 'deploy/compose.yaml'))
    const services = (compose as Json)['services'] as Record<string, Json>
    expect(Object.keys(services).toSorted()).toEqual(['ctxgate', 'grafana', 'mock', 'prometheus', 'redis'])
    for (const [name, service] of Object.entries(services)) {
      const image = String(service['image'])
      expect(image === ctxgateImage || thirdParty.some((pattern) => pattern.test(image)), `${name}: ${image}`).toBe(
        true,
      )
      for (const volume of (service['volumes'] as string[] | undefined) ?? [])
        expect(existsSync(join(root, 'deploy', volume.split(':')[0] as string)), volume).toBe(true)
      for (const key of Object.keys((service['environment'] as Json | undefined) ?? {}))
        if (key.startsWith('CTXGATE_')) expect(envNames.has(key), key).toBe(true)
    }
    expect(((services['mock']?.['command'] as string[]) ?? [])[0]).toBe('mock')
    expect(existsSync(join(root, dirname('deploy/grafana/ctxgate-dashboard.json'), 'ctxgate-dashboard.json'))).toBe(
      true,
    )
  })

  it('the Dockerfile builds in two stages, runs as non-root with a health check on the listening port', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
    expect(dockerfile.match(/^FROM node:\d+/gm)).toHaveLength(2)
    // Numeric, so Kubernetes can check runAsNonRoot; the same id the manifests name.
    expect(dockerfile).toMatch(/^USER 1000(:1000)?$/m)
    expect(dockerfile).toMatch(/^HEALTHCHECK /m)
    expect(dockerfile).toMatch(/CTXGATE_HOST=0\.0\.0\.0/)
    expect(dockerfile).toMatch(/^EXPOSE 8787$/m)
    expect(dockerfile).toMatch(/npm prune --omit=dev/)
    // A fixed malloc threshold: large bodies' buffers go back to the system when freed (docs/memory-budgets.md).
    expect(dockerfile).toMatch(/MALLOC_MMAP_THRESHOLD_=1048576$/m)
    expect(readFileSync(join(root, '.dockerignore'), 'utf8')).toMatch(/^node_modules$/m)
  })
})
