// The embedded server validates with @medplum/core's own validateResource (base R4 schemas, no profile), the check
// Medplum's repository runs. Plain JavaScript so the validation worker threads need no TypeScript loader.
// One addition: a resource nested past MAX_DEPTH levels of objects and arrays gets one clear issue before
// validation. Medplum's recursion overflows the stack somewhere past ~1,400 levels, at a depth that depends on the
// thread (a worker could accept a resource the main thread then could not serialise).
import { OperationOutcomeError, createStructureIssue, normalizeOperationOutcome, validateResource } from '@medplum/core';

/** Levels of JSON objects and arrays a resource may have; real resources use a few dozen at most. */
export const MAX_DEPTH = 128;

/** The path of the first value nested past MAX_DEPTH, else undefined; reads no deeper than that. */
function tooDeepAt(value, path, depth) {
  if (depth > MAX_DEPTH) return path;
  const array = Array.isArray(value);
  for (const key of Object.keys(value)) {
    const child = value[key];
    if (child && typeof child === 'object') {
      const found = tooDeepAt(child, array ? `${path}[${key}]` : `${path}.${key}`, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** Throws a "Nested too deeply" OperationOutcomeError past MAX_DEPTH, for code that walks a body before validating it. */
export function assertNotTooDeep(resource) {
  const path = tooDeepAt(resource, resource.resourceType, 1);
  if (path === undefined) return;
  const issue = createStructureIssue(path, `Nested too deeply: more than ${MAX_DEPTH} levels of objects and arrays`);
  throw new OperationOutcomeError({ resourceType: 'OperationOutcome', issue: [issue] });
}

/** Medplum's validateResource after the depth check: the issues, or an OperationOutcomeError. */
export function validateFhirResource(resource) {
  if (resource && typeof resource === 'object') assertNotTooDeep(resource);
  return validateResource(resource);
}

/** One resource's verdict for a bulk write: undefined when valid, else the OperationOutcome saying why not. */
export function verdictOf(resource) {
  try {
    validateFhirResource(resource);
    return undefined;
  } catch (error) {
    return normalizeOperationOutcome(error);
  }
}
