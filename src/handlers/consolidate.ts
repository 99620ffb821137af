// The consolidation function (every 5 minutes): emptiness, multi-node and single-node consolidation
// for every NodePool except the `WhenEmpty` ones, which the emptiness function owns.
// `handler` (and the default export) is what serverless.yml points at; the factory lets tests inject
// clients, the environment, the clock and the output.
import { builtOnFirstCall, createPassHandler, type HandlerDeps } from './pass.ts';

export const createConsolidateHandler = (deps: HandlerDeps = {}) => createPassHandler('consolidate', deps);

// Built on the container's first invocation, not at import: importing the module (tests, tools) reads
// no configuration and prints nothing.
export const handler = builtOnFirstCall(() => createConsolidateHandler());
export default handler;
