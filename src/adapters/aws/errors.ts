// Errors of the catalog adapters. SDK errors carry transport details the rest of the product has no
// use for; what a caller needs is which AWS call failed and why, in one sentence, so that a fallback
// warning or a log line can say it.

/** A catalog data call failed (an EC2 or Pricing API call, the catalog cache, the bundled catalog). */
export class CatalogSourceError extends Error {
  override readonly name = 'CatalogSourceError';
  constructor(
    /** The call that failed, e.g. `ec2:DescribeInstanceTypes`, `pricing:GetProducts`, `dynamodb:GetItem`. */
    readonly operation: string,
    /** What went wrong, e.g. `UnauthorizedOperation: You are not authorized ...`. */
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${operation} failed: ${problem}`, options);
  }
}

/** Wraps anything thrown by an SDK call (or by our parsing of its answer) as a CatalogSourceError. */
export function toCatalogSourceError(operation: string, error: unknown): CatalogSourceError {
  if (error instanceof CatalogSourceError) return error;
  return new CatalogSourceError(operation, describeError(error), { cause: error });
}

/** `Name: message` for SDK exceptions (their name is the AWS error code), else the message. */
export function describeError(error: unknown): string {
  // Our own error already reads as a sentence naming the call.
  if (error instanceof CatalogSourceError) return error.message;
  if (error instanceof Error) {
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    return `${name}${error.message}`;
  }
  return String(error);
}

/** Runs one AWS call and names it in the error if it fails. */
export async function callAws<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toCatalogSourceError(operation, error);
  }
}
