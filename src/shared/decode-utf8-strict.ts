// Bodies must be well-formed UTF-8: a lenient decoder turns a malformed byte sequence into U+FFFD, which then goes
// on (upstream, into the FHIR store) as if the client had written it. Shared by the JSON parsers of /v1 and /fhir.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of `buf` if it is well-formed UTF-8 (a leading BOM dropped), else undefined. */
export function decodeUtf8Strict(buf: Uint8Array): string | undefined {
  try {
    return utf8.decode(buf);
  } catch {
    return undefined;
  }
}
