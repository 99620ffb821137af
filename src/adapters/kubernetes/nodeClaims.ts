// The actuator's `NodeClaimApi` port on a Kubernetes API: Karpenter's `karpenter.sh/v1` NodeClaims,
// through the generic custom-objects client (the typed client has no Karpenter models).
//
// Every answer is an outcome, never an HTTP code: a claim that does not exist is `undefined` or `gone`,
// and a create repeated after a lost answer gets the first claim back (`reused`), because the claim's
// name is derived from the command and the replacement's index (nodeClaimTemplate.ts). Anything else
// the API answers becomes a NodeClaimApiError naming the operation and the HTTP status.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { DeleteResult, NodeClaimApi, NodeClaimCondition, NodeClaimRequest, NodeClaimView } from '../../core/ports/actuator.ts';
import { NODECLAIM_COMMAND_ANNOTATION, NODECLAIM_INDEX_ANNOTATION, NodeClaimApiError } from '../../core/ports/actuator.ts';
import { LabelKeys } from '../../core/model/types.ts';
import { DEFAULT_PAGE_SIZE, KubernetesApiError, apiStatusOf, listAllPages, statusCodeOf, toKubernetesError } from './kubeClient.ts';
import { buildNodeClaim } from './nodeClaimTemplate.ts';

const GROUP = 'karpenter.sh';
const VERSION = 'v1';
const PLURAL = 'nodeclaims';
/** How operations name the resource in errors: `create nodeclaims.karpenter.sh`. */
export const NODECLAIM_RESOURCE = `${PLURAL}.${GROUP}`;

export interface KubeNodeClaimsOptions {
  /** Page size of list calls. Default 500. */
  readonly pageSize?: number;
  /** Reads one NodeClaim object (plain JSON) as the actuator sees it. Default `toNodeClaimView`. */
  readonly parse?: (object: unknown) => NodeClaimView;
}

export class KubeNodeClaims implements NodeClaimApi {
  private readonly api: CustomObjectsApi;
  private readonly pageSize: number;
  private readonly parse: (object: unknown) => NodeClaimView;

  constructor(kubeConfig: KubeConfig, options: KubeNodeClaimsOptions = {}) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.parse = options.parse ?? toNodeClaimView;
  }

  /**
   * Creates the claim for (command, index). A 409 AlreadyExists means an earlier attempt created it (its
   * answer lost): the claim is read back and returned with `reused: true`, but only when it carries the
   * same command and index; a claim of that name made by anyone else is never adopted.
   */
  async create(request: NodeClaimRequest): Promise<{ readonly claim: NodeClaimView; readonly reused: boolean }> {
    const body = buildNodeClaim(request);
    const name = body.metadata.name;
    const operation = `create ${NODECLAIM_RESOURCE}`;
    try {
      const created: unknown = await this.api.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body });
      return { claim: this.view(created, operation, name), reused: false };
    } catch (error) {
      if (error instanceof NodeClaimApiError || !isAlreadyExists(error)) throw nodeClaimError(error, operation, name);
    }
    const existing = await this.get(name);
    if (existing === undefined) {
      // Deleted between the 409 and the read: nothing to reuse, and creating again now could race the
      // deletion's finalizer; the caller's next attempt starts clean.
      throw new NodeClaimApiError(operation, `NodeClaim ${name} already existed but was gone when read back; try again`, 409);
    }
    if (existing.commandId !== request.commandId || existing.replacementIndex !== request.index) {
      const owner = existing.commandId === undefined ? 'no command of ours' : `command ${existing.commandId}, replacement ${existing.replacementIndex ?? '?'}`;
      throw new NodeClaimApiError(
        operation,
        `NodeClaim ${name} already exists and belongs to ${owner}, not command ${request.commandId}, replacement ${request.index}; it is not adopted`,
        409,
      );
    }
    return { claim: existing, reused: true };
  }

  async get(name: string): Promise<NodeClaimView | undefined> {
    const operation = `get ${NODECLAIM_RESOURCE}`;
    let answer: unknown;
    try {
      answer = await this.api.getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name });
    } catch (error) {
      if (statusCodeOf(error) === 404) return undefined;
      throw nodeClaimError(error, operation, name);
    }
    return this.view(answer, operation, name);
  }

  /**
   * A node names its claim nowhere Karpenter guarantees, and the API has no field selector on
   * status.providerID, so the claims are listed (paged) and matched: by instance id first (the
   * providerID ends with `/<instanceId>`), then by status.nodeName. EKS names nodes after private IPs,
   * which come back; among claims with the same node name, one not being deleted is preferred.
   */
  async findForNode(node: { readonly name: string; readonly instanceId?: string }): Promise<NodeClaimView | undefined> {
    const claims = await this.listAll();
    const { instanceId } = node;
    if (instanceId !== undefined && instanceId !== '') {
      const byInstance = claims.find((c) => c.providerId !== undefined && c.providerId.endsWith(`/${instanceId}`));
      if (byInstance) return byInstance;
    }
    const byName = claims.filter((c) => c.nodeName === node.name);
    return byName.find((c) => !c.deleting) ?? byName[0];
  }

  /**
   * Deletes the claim; Karpenter's termination finalizer drains and terminates what is left. With
   * `uid`, only that claim: one recreated under the name answers 409 to the precondition, which, like
   * 404, means the claim we meant is `gone`.
   */
  async delete(name: string, options: { readonly uid?: string } = {}): Promise<DeleteResult> {
    try {
      await this.api.deleteClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name,
        ...(options.uid === undefined ? {} : { body: { preconditions: { uid: options.uid } } }),
      });
      return 'deleted';
    } catch (error) {
      const code = statusCodeOf(error);
      if (code === 404 || (code === 409 && options.uid !== undefined)) return 'gone';
      throw nodeClaimError(error, `delete ${NODECLAIM_RESOURCE}`, name);
    }
  }

  /** Every NodeClaim carrying our command annotation, whatever its state. */
  async listOurs(): Promise<readonly NodeClaimView[]> {
    return (await this.listAll()).filter((c) => c.commandId !== undefined);
  }

  private async listAll(): Promise<NodeClaimView[]> {
    const operation = `list ${NODECLAIM_RESOURCE}`;
    let items: unknown[];
    try {
      items = await listAllPages(
        NODECLAIM_RESOURCE,
        async (page) => {
          // A custom object list is plain JSON: the continue token is `metadata.continue`.
          const answer = (await this.api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, ...page })) as {
            items?: unknown[];
            metadata?: { continue?: string };
          };
          const token = answer.metadata?.continue;
          return { items: answer.items ?? [], ...(token ? { metadata: { _continue: token } } : {}) };
        },
        this.pageSize,
      );
    } catch (error) {
      throw nodeClaimError(error, operation);
    }
    return items.map((item) => this.view(item, operation));
  }

  private view(object: unknown, operation: string, name?: string): NodeClaimView {
    try {
      return this.parse(object);
    } catch (error) {
      const what = name === undefined ? 'a NodeClaim' : `NodeClaim ${name}`;
      throw new NodeClaimApiError(operation, `the answer for ${what} could not be read: ${error instanceof Error ? error.message : String(error)}`, undefined, {
        cause: error,
      });
    }
  }
}

/** A create's 409: AlreadyExists (the API's Status says so, or says nothing else). */
function isAlreadyExists(error: unknown): boolean {
  if (statusCodeOf(error) !== 409) return false;
  const reason = apiStatusOf(error)?.reason;
  return reason === undefined || reason === 'AlreadyExists';
}

/** Anything a call threw, as a NodeClaimApiError with the operation and the HTTP status. */
function nodeClaimError(error: unknown, operation: string, name?: string): NodeClaimApiError {
  if (error instanceof NodeClaimApiError) return error;
  const kube: KubernetesApiError = error instanceof KubernetesApiError ? error : toKubernetesError(error, operation, name === undefined ? NODECLAIM_RESOURCE : `NodeClaim ${name}`);
  const problem = name === undefined ? kube.problem : `NodeClaim ${name}: ${kube.problem}`;
  return new NodeClaimApiError(operation, problem, kube.statusCode, { cause: error });
}

// ---------------------------------------------------------------------------------------------------
// Reading a NodeClaim

type JsonRecord = Record<string, unknown>;

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A NodeClaim object (plain JSON, as the API answers) as the actuator sees it. Karpenter's lifecycle
 * controller (nodeclaim/lifecycle) sets the Launched, Registered and Initialized conditions in turn;
 * providerID and nodeName appear once launched and registered. Throws when the object has no name.
 */
export function toNodeClaimView(object: unknown): NodeClaimView {
  if (!isRecord(object)) throw new Error('a NodeClaim must be an object');
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  const name = text(metadata['name']);
  if (name === undefined) throw new Error('the NodeClaim has no metadata.name');
  const labels = isRecord(metadata['labels']) ? metadata['labels'] : {};
  const annotations = isRecord(metadata['annotations']) ? metadata['annotations'] : {};
  const status = isRecord(object['status']) ? object['status'] : {};
  const uid = text(metadata['uid']);
  const nodePool = text(labels[LabelKeys.nodePool]);
  const commandId = text(annotations[NODECLAIM_COMMAND_ANNOTATION]);
  const indexText = text(annotations[NODECLAIM_INDEX_ANNOTATION]);
  const replacementIndex = indexText !== undefined && /^\d+$/.test(indexText) ? Number(indexText) : undefined;
  const providerId = text(status['providerID']);
  const instanceId = providerId === undefined ? undefined : text(providerId.slice(providerId.lastIndexOf('/') + 1));
  const nodeName = text(status['nodeName']);
  const conditions = Array.isArray(status['conditions']) ? status['conditions'].filter(isRecord) : [];
  const condition = (type: string): NodeClaimCondition | undefined => {
    const found = conditions.find((c) => c['type'] === type);
    if (found === undefined) return undefined;
    const value = found['status'];
    const reason = text(found['reason']);
    const message = text(found['message']);
    return {
      status: value === 'True' || value === 'False' ? value : 'Unknown',
      ...(reason === undefined ? {} : { reason }),
      ...(message === undefined ? {} : { message }),
    };
  };
  const launched = condition('Launched');
  const registered = condition('Registered');
  const initialized = condition('Initialized');
  const created = text(metadata['creationTimestamp']);
  const createdAt = created === undefined ? undefined : Date.parse(created);
  return {
    name,
    ...(uid === undefined ? {} : { uid }),
    ...(nodePool === undefined ? {} : { nodePool }),
    ...(commandId === undefined ? {} : { commandId }),
    ...(replacementIndex === undefined ? {} : { replacementIndex }),
    ...(providerId === undefined ? {} : { providerId }),
    ...(instanceId === undefined ? {} : { instanceId }),
    ...(nodeName === undefined ? {} : { nodeName }),
    ...(launched === undefined ? {} : { launched }),
    ...(registered === undefined ? {} : { registered }),
    ...(initialized === undefined ? {} : { initialized }),
    deleting: metadata['deletionTimestamp'] !== undefined && metadata['deletionTimestamp'] !== null,
    ...(createdAt === undefined || Number.isNaN(createdAt) ? {} : { createdAt }),
  };
}
