// The consolidation function (every 5 minutes): emptiness, multi-node and single-node consolidation
// for every NodePool except the `WhenEmpty` ones, which the emptiness function owns.
// `handler` (and the default export) is what serverless.yml points at; the factory lets tests inject
// clients, the environment, the clock and the output.
import { createPassHandler, type HandlerDeps } from './pass.ts';

export const createConsolidateHandler = (deps: HandlerDeps = {}) => createPassHandler('consolidate', deps);

export const handler = createConsolidateHandler();
export default handler;
