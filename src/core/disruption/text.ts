// Small formatting helpers for the sentences the plan gives a person.

/** Go-style compact duration: 90s -> "1m30s", 2h -> "2h". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return 'forever';
  let seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds === 0) return '0s';
  const parts: string[] = [];
  const days = Math.floor(seconds / 86400);
  if (days >= 2) {
    parts.push(`${days}d`);
    seconds -= days * 86400;
  }
  const hours = Math.floor(seconds / 3600);
  if (hours) parts.push(`${hours}h`);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  if (minutes) parts.push(`${minutes}m`);
  seconds -= minutes * 60;
  if (seconds) parts.push(`${seconds}s`);
  return parts.join('');
}

export const formatTime = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

export const dollars = (perHour: number): string => `$${perHour.toFixed(4).replace(/0{1,2}$/, '')}/hr`;

export const cents = (perHourDollars: number): string => `${(perHourDollars * 100).toFixed(1)} cents/hr`;
