// FHIR's `id` datatype (R4 datatypes, "id"): 1 to 64 characters, each a letter, a digit, "-" or ".". The one copy
// of that rule for the tools, the FHIR clients' guards, the embedded server and the loader.

/** The id rule unanchored, for building larger patterns (`Patient/<id>`, references). */
export const FHIR_ID_PATTERN = '[A-Za-z0-9\\-.]{1,64}';

export const FHIR_ID = new RegExp(`^${FHIR_ID_PATTERN}$`);
