// FHIR's `id` datatype (R4 datatypes, "id"): 1 to 64 characters, each a letter, a digit, "-" or ".". The one copy
// of that rule for the tools, the FHIR clients' guards, the embedded server and the loader.

/** The id rule unanchored, for building larger patterns (`Patient/<id>`, references). */
export const FHIR_ID_PATTERN = '[A-Za-z0-9\\-.]{1,64}';

/**
 * A lookahead for just before an id that ends the string: "." and ".." fit the id rule, but in a URL path they are
 * dot segments (`Patient/..` resolves to the base), so no id may be only those.
 */
export const NOT_A_DOT_SEGMENT = '(?!\\.{1,2}$)';

export const FHIR_ID = new RegExp(`^${NOT_A_DOT_SEGMENT}${FHIR_ID_PATTERN}$`);
