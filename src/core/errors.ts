// Domain errors. Adapters translate SDK and parse failures into these so that entry points can map
// them to exit codes and messages without knowing where they came from.

/** Bad input: the CLI exits 2. The message names the file, the object and the field. */
export class InputError extends Error {
  override readonly name = 'InputError';
  constructor(
    /** The object, e.g. `NodePool "default"` or `Pod default/web-0`; empty when the file itself is bad. */
    readonly object: string,
    /** The field path, e.g. `spec.disruption.budgets[0]`; empty when the whole object is bad. */
    readonly field: string,
    /** What is wrong, e.g. `schedule requires duration`. */
    readonly problem: string,
    /** The file (or source) it came from; adapters fill it in with `inFile`. */
    readonly file?: string,
  ) {
    super(formatInputError(file, object, field, problem));
  }

  /** The same error, attributed to a file. */
  inFile(file: string): InputError {
    return new InputError(this.object, this.field, this.problem, file);
  }
}

function formatInputError(file: string | undefined, object: string, field: string, problem: string): string {
  // e.g. nodepools.yaml: NodePool "default": spec.disruption.budgets[0]: schedule requires duration
  return [file, object, field, problem].filter((part) => part !== undefined && part !== '').join(': ');
}
