import type { Bindings, ChildLoggerOptions, LevelWithSilent } from 'pino'
import type { FastifyBaseLogger } from 'fastify'

/**
 * A request's logger (fastify makes one per request, bound to its reqId), made only when something
 * logs through it: pino's `child` serializes its bindings up front, about 10 µs on every request,
 * and nearly every request logs nothing through it (ctxgate writes its own line per request).
 */
export class LazyChildLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #made: FastifyBaseLogger | undefined

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  #logger(): FastifyBaseLogger {
    this.#made ??= this.#parent.child(this.#bindings, this.#options)
    return this.#made
  }

  get level(): LevelWithSilent | string {
    return this.#made?.level ?? this.#parent.level
  }

  set level(level: LevelWithSilent | string) {
    this.#logger().level = level
  }

  // Methods on the prototype, not closures per instance: one of these is made for every request.
  fatal(...args: unknown[]): void {
    Reflect.apply(this.#logger().fatal, this.#logger(), args)
  }

  error(...args: unknown[]): void {
    Reflect.apply(this.#logger().error, this.#logger(), args)
  }

  warn(...args: unknown[]): void {
    Reflect.apply(this.#logger().warn, this.#logger(), args)
  }

  info(...args: unknown[]): void {
    Reflect.apply(this.#logger().info, this.#logger(), args)
  }

  debug(...args: unknown[]): void {
    Reflect.apply(this.#logger().debug, this.#logger(), args)
  }

  trace(...args: unknown[]): void {
    Reflect.apply(this.#logger().trace, this.#logger(), args)
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }
}
