// The emptiness-TTL function (every minute or two): deletes empty nodes of `WhenEmpty` NodePools once
// consolidateAfter has passed, and nothing else.
import { createPassHandler, type HandlerDeps } from './pass.ts';

export const createEmptinessHandler = (deps: HandlerDeps = {}) => createPassHandler('emptiness', deps);

export const handler = createEmptinessHandler();
export default handler;
