// Every Host header a request carried, from the raw header list. Node keeps only the first of several in
// `req.headers.host`, while a proxy in front may have used the last; a policy must see them all and refuse two.

export const hostHeaders = (rawHeaders: readonly string[]): string[] =>
  rawHeaders.filter((value, i) => i % 2 === 1 && rawHeaders[i - 1]!.toLowerCase() === 'host');
