// The one module both functions load (serverless.yml: `src/handlers/index.consolidate` and
// `src/handlers/index.emptiness`), so the package holds a single bundle. Each function builds only its
// own handler when the module loads (Lambda names it in `_HANDLER`), so configuration is still read
// and checked at cold start; the other handler is built on first use, which only happens when
// something else (a test, a local invoke) calls it. consolidate.ts and emptiness.ts stay the
// per-function modules for tests and local use.
import type { Context } from 'aws-lambda';
import { createPassHandler, type FunctionName, type HandlerResponse, type PassEvent } from './pass.ts';

type Handler = (event: PassEvent, context: Context) => Promise<HandlerResponse>;

function entry(name: FunctionName): Handler {
  const create = (): Handler => createPassHandler(name) as unknown as Handler;
  // Lambda's `_HANDLER` is `<file>.<export>`: the function this process serves.
  let handler = process.env['_HANDLER']?.endsWith(`.${name}`) ? create() : undefined;
  return (event, context) => (handler ??= create())(event, context);
}

export const consolidate = entry('consolidate');
export const emptiness = entry('emptiness');
