// The emptiness-TTL function (every minute or two): deletes empty nodes of `WhenEmpty` NodePools once
// consolidateAfter has passed, and nothing else.
import { builtOnFirstCall, createPassHandler, type HandlerDeps } from './pass.ts';

export const createEmptinessHandler = (deps: HandlerDeps = {}) => createPassHandler('emptiness', deps);

// Built on the container's first invocation, not at import: importing the module (tests, tools) reads
// no configuration and prints nothing.
export const handler = builtOnFirstCall(() => createEmptinessHandler());
export default handler;
