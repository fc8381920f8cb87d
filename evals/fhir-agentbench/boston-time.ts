// MIMIC-IV keeps Boston (Beth Israel Deaconess) wall-clock times, date-shifted into 2100–2200, and MIMIC-IV on FHIR
// writes them with that day's Boston offset (-05:00 in winter, -04:00 in summer). FHIR-AgentBench's gold answers
// come from SQL over the same naive wall-clock times, so a naive "current time" is read as Boston time too: the
// agent's clock and the data then agree to the minute, and "today"/"this month" cut where the SQL cut.
const NEW_YORK = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'longOffset' });

function offsetAt(utcMs: number): string {
  const name = NEW_YORK.formatToParts(new Date(utcMs)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT-05:00';
  return name === 'GMT' ? '+00:00' : name.replace('GMT', '');
}

const minutes = (offset: string) => (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));

/** `2136-12-31 23:59:00` → `2136-12-31T23:59:00-05:00`. Throws on anything that is not a naive date-time. */
export function bostonDateTime(naive: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(naive.trim());
  if (!m) throw new Error(`not a naive date-time: ${naive}`);
  const [, y, mo, d, h, mi, s = '00'] = m;
  const asUtc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  // The offset in force at the wall-clock instant: try standard time first, then daylight time.
  let offset = offsetAt(asUtc + 5 * 3_600_000);
  if (minutes(offsetAt(asUtc - minutes(offset) * 60_000)) !== minutes(offset)) offset = offsetAt(asUtc - minutes(offset) * 60_000);
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`;
}
