// Host ports: two pods on one node cannot both bind the same (port, protocol) on overlapping host IPs.
// An empty host IP or 0.0.0.0 binds every address, so it overlaps any other IP.
import type { HostPort } from '../model/types.ts';

export interface PortUse {
  readonly port: number;
  readonly protocol: string;
  /** Normalised: '0.0.0.0' stands for "every address". */
  readonly hostIP: string;
}

const ANY_IP = '0.0.0.0';

/** Drops port 0 (no host port) and fills Kubernetes' defaults (TCP, all addresses). */
export function normalizeHostPorts(ports: readonly HostPort[]): PortUse[] {
  return ports
    .filter((p) => p.port > 0)
    .map((p) => ({
      port: p.port,
      protocol: (p.protocol || 'TCP').toUpperCase(),
      hostIP: p.hostIP === undefined || p.hostIP === '' ? ANY_IP : p.hostIP,
    }));
}

export function portsConflict(a: PortUse, b: PortUse): boolean {
  return a.port === b.port && a.protocol === b.protocol && (a.hostIP === ANY_IP || b.hostIP === ANY_IP || a.hostIP === b.hostIP);
}

/** The first wanted port that collides with one in use, or undefined. */
export function firstPortConflict(wanted: readonly PortUse[], inUse: Iterable<PortUse>): PortUse | undefined {
  for (const used of inUse) {
    for (const port of wanted) if (portsConflict(port, used)) return port;
  }
  return undefined;
}

export function formatPort(port: PortUse): string {
  return `${port.port}/${port.protocol}${port.hostIP === ANY_IP ? '' : ` on ${port.hostIP}`}`;
}
