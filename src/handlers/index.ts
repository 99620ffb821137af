// The one module every function loads (serverless.yml: `src/handlers/index.consolidate`,
// `src/handlers/index.emptiness`, `src/handlers/index.interruption`), so the package holds a single
// bundle. Each function builds only its own handler when the module loads (Lambda names it in
// `_HANDLER`), so configuration is still read and checked at cold start; the others are built on first
// use, which only happens when something else (a test, a local invoke) calls them. consolidate.ts,
// emptiness.ts and interruption.ts stay the per-function modules for tests and local use.
import type { Context } from 'aws-lambda';
import { createPassHandler, type FunctionName, type HandlerResponse, type PassEvent } from './pass.ts';
import { createInterruptionHandler, type InterruptionResponse } from './interruption.ts';

type Handler = (event: PassEvent, context: Context) => Promise<HandlerResponse>;

function entry(name: FunctionName): Handler {
  const create = (): Handler => createPassHandler(name) as unknown as Handler;
  // Lambda's `_HANDLER` is `<file>.<export>`: the function this process serves.
  let handler = process.env['_HANDLER']?.endsWith(`.${name}`) ? create() : undefined;
  return (event, context) => (handler ??= create())(event, context);
}

export const consolidate = entry('consolidate');
export const emptiness = entry('emptiness');

// The interruption function (serverless.yml `src/handlers/index.interruption`): an EventBridge notice
// rather than a pass, built the same way.
export const interruption = ((): ((event: unknown, context: Context) => Promise<InterruptionResponse>) => {
  let handler = process.env['_HANDLER']?.endsWith('.interruption') ? createInterruptionHandler() : undefined;
  return (event, context) => (handler ??= createInterruptionHandler())(event, context);
})();
