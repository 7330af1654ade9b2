/** A recording ctxgate cannot read, with the file and the reason. */
export class ImportError extends Error {
  readonly file: string

  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`)
    this.name = 'ImportError'
    this.file = file
  }
}
