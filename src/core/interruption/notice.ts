// What an EventBridge event about an EC2 instance asks of the interruption function, read from the
// event alone (no clock, no I/O). The events and what each calls for follow the queue mode of
// aws-node-termination-handler, which Karpenter's interruption controller also follows for the nodes it
// owns:
//
//   EC2 Spot Instance Interruption Warning   taint, cordon and drain before the instance is reclaimed,
//                                            two minutes after the event's `time`
//   EC2 Instance Rebalance Recommendation    taint and cordon only (the handler's default: the
//                                            instance is at risk, not yet going)
//   AWS Health Event, EC2 scheduledChange    taint, cordon and drain (retirement, maintenance: the
//   with an AWS_EC2_* event type code        handler drains at once, the change may be days away)
//   EC2 Instance State-change Notification   nothing: a stopping or terminated instance has nothing
//                                            left to drain in time; logged only
//
// Anything else (another detail-type, a Health event of another service or category, a payload without
// an instance id) is `unrecognised`: logged and dropped, never retried, since a retry cannot fix it.
export type NoticeKind = 'spotInterruption' | 'rebalanceRecommendation' | 'scheduledChange' | 'stateChange';

/** `cordonAndDrain`: taint, cordon, evict; `cordon`: taint and cordon; `none`: log only. */
export type NoticeAction = 'cordonAndDrain' | 'cordon' | 'none';

export interface InterruptionNotice {
  /** The EventBridge event id (the same on a redelivery). */
  readonly id: string;
  readonly kind: NoticeKind;
  readonly detailType: string;
  /** The event's `time`, epoch ms. */
  readonly time: number;
  /** The EC2 instances it names, deduplicated, in order. */
  readonly instanceIds: readonly string[];
  readonly action: NoticeAction;
  /**
   * When the instance goes, epoch ms, when the notice says: a spot interruption's `time` plus two
   * minutes. Evictions stop a margin before it.
   */
  readonly reclaimAt?: number;
  /** Spot interruptions: `terminate`, `stop` or `hibernate`. */
  readonly instanceAction?: string;
  /** State changes: the state entered. */
  readonly state?: string;
  /** Health events: e.g. `AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED`. */
  readonly eventTypeCode?: string;
}

export type ParsedNotice = { readonly notice: InterruptionNotice } | { readonly unrecognised: string };

export const DetailTypes = {
  spotInterruption: 'EC2 Spot Instance Interruption Warning',
  rebalanceRecommendation: 'EC2 Instance Rebalance Recommendation',
  stateChange: 'EC2 Instance State-change Notification',
  health: 'AWS Health Event',
} as const;

/** The two minutes between a spot interruption warning and the interruption (EC2 user guide). */
export const SPOT_NOTICE_MS = 120_000;

/** States in which aws-node-termination-handler treats an instance as going away. */
export const LEAVING_STATES: ReadonlySet<string> = new Set(['stopping', 'stopped', 'shutting-down', 'terminated']);

/** Only these Health event type codes are about EC2 instances. */
export const HEALTH_EVENT_CODE_PREFIX = 'AWS_EC2_';

const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

export function parseInterruptionEvent(event: unknown): ParsedNotice {
  if (!isRecord(event)) return { unrecognised: `the event is not an object: ${short(event)}` };
  const detailType = event['detail-type'];
  const source = event['source'];
  const id = typeof event['id'] === 'string' ? event['id'] : '';
  const time = typeof event['time'] === 'string' ? Date.parse(event['time']) : Number.NaN;
  const detail = isRecord(event['detail']) ? event['detail'] : undefined;
  if (typeof detailType !== 'string' || typeof source !== 'string') return { unrecognised: 'the event has no source or detail-type' };
  if (detail === undefined) return { unrecognised: `${detailType}: the event has no detail` };
  if (!Number.isFinite(time)) return { unrecognised: `${detailType}: the event's time ${short(event['time'])} is not a time` };
  const base = { id, detailType, time };

  if (source === 'aws.ec2') {
    const instanceId = detail['instance-id'];
    if (typeof instanceId !== 'string' || !INSTANCE_ID.test(instanceId)) {
      return { unrecognised: `${detailType}: detail.instance-id ${short(instanceId)} is not an EC2 instance id` };
    }
    const instanceIds = [instanceId];
    switch (detailType) {
      case DetailTypes.spotInterruption: {
        const instanceAction = typeof detail['instance-action'] === 'string' ? detail['instance-action'] : undefined;
        return {
          notice: { ...base, kind: 'spotInterruption', instanceIds, action: 'cordonAndDrain', reclaimAt: time + SPOT_NOTICE_MS, ...(instanceAction === undefined ? {} : { instanceAction }) },
        };
      }
      case DetailTypes.rebalanceRecommendation:
        return { notice: { ...base, kind: 'rebalanceRecommendation', instanceIds, action: 'cordon' } };
      case DetailTypes.stateChange: {
        const state = typeof detail['state'] === 'string' ? detail['state'] : '';
        return { notice: { ...base, kind: 'stateChange', instanceIds, action: 'none', state } };
      }
      default:
        return { unrecognised: `detail-type ${JSON.stringify(detailType)} from aws.ec2 is not one this function handles` };
    }
  }

  if (source === 'aws.health' && detailType === DetailTypes.health) {
    const service = detail['service'];
    const category = detail['eventTypeCategory'];
    const code = detail['eventTypeCode'];
    if (service !== 'EC2' || category !== 'scheduledChange' || typeof code !== 'string' || !code.startsWith(HEALTH_EVENT_CODE_PREFIX)) {
      return { unrecognised: `AWS Health event ${short(code)} (${short(service)}, ${short(category)}) is not an EC2 scheduled change` };
    }
    const entities = Array.isArray(detail['affectedEntities']) ? detail['affectedEntities'] : [];
    const instanceIds = [
      ...new Set(entities.map((e) => (isRecord(e) ? e['entityValue'] : undefined)).filter((v): v is string => typeof v === 'string' && INSTANCE_ID.test(v))),
    ];
    if (instanceIds.length === 0) return { unrecognised: `AWS Health event ${code} names no EC2 instance` };
    return { notice: { ...base, kind: 'scheduledChange', instanceIds, action: 'cordonAndDrain', eventTypeCode: code } };
  }

  return { unrecognised: `${source} ${JSON.stringify(detailType)} is not an event this function handles` };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
