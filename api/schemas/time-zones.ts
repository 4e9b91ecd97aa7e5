/**
 * The time zones a schedule may name, as one list so the OpenAPI document states it as an enum: the IANA zones this
 * process's ICU lists (the same tz database Temporal reads), plus `UTC` and the current IANA names of zones ICU
 * still lists under an older one (`Asia/Calcutta` is listed, `Asia/Kolkata` is what people write). Every name here
 * is one `Intl.DateTimeFormat` takes; aliases outside the list (`US/Eastern`) are refused on write.
 */
const CURRENT_NAMES = [
  'UTC',
  'Etc/UTC',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Asia/Ho_Chi_Minh',
  'Asia/Yangon',
  'Europe/Kyiv',
  'America/Nuuk',
  'Atlantic/Faroe',
  'Pacific/Kanton',
  'Pacific/Chuuk',
  'Pacific/Pohnpei',
  'America/Argentina/Buenos_Aires',
  'America/Indiana/Indianapolis',
  'America/Kentucky/Louisville',
];

function known(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export const TIME_ZONES: readonly [string, ...string[]] = [
  ...new Set(['UTC', ...Intl.supportedValuesOf('timeZone'), ...CURRENT_NAMES.filter(known)]),
] as [string, ...string[]];
