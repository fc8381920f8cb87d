// Medplum's validateResource (base R4 schemas, no profile), with the same results at about a third of the CPU. Bulk loads
// spent most of their time in it (MIMIC-IV's ~150k resources: ~200 µs each, two cores busy for the whole load).
//
// This is a port of @medplum/core 4.5.2's ResourceValidator and Crawler (src/typeschema/validation.ts and
// crawler.ts; Copyright Orangebot, Inc. and Medplum contributors, Apache-2.0). Every check, issue text, path and
// issue order is theirs; only the work per element changed:
//   - a schema element absent from the value costs one key lookup, not a typed value, a path and a visit;
//   - the property names a choice-of-type element can take ("valueQuantity", …) are worked out once per element;
//   - the null scan and the additional-property check build path strings only for the issues they report, and the
//     choice-of-type split of a key is worked out once per schema and key;
//   - the pattern/fixed comparison is skipped for elements that have neither.
// One deliberate difference: a resource nested deeper than MAX_DEPTH levels of objects and arrays is rejected with
// one clear issue before anything else. Medplum's recursion overflows the stack somewhere past ~1,400 levels, at a
// depth that depends on the thread (a worker thread passed a resource the main thread then could not serialise).
// The Medplum functions it calls are the exported ones. test/validate-fhir-resource.test.ts compares both on real
// data shapes and on mutated resources, issue for issue; the pinned @medplum/core version guards the rest.
// Plain JavaScript so the validation worker threads need no TypeScript loader.
import {
  HTTP_HL7_ORG,
  LRUCache,
  OperationOutcomeError,
  PropertyType,
  UCUM,
  arrayify,
  capitalize,
  createConstraintIssue,
  createOperationOutcomeIssue,
  createProcessingIssue,
  createStructureIssue,
  deepEquals,
  deepIncludes,
  evalFhirPathTyped,
  fhirTypeToJsType,
  getDataType,
  getNestedProperty,
  getTypedPropertyValue,
  getTypedPropertyValueWithoutSchema,
  isPrimitiveType,
  isReference,
  isResource,
  isEmpty,
  matchDiscriminant,
  normalizeOperationOutcome,
  toTypedValue,
  validationError,
  validationRegexes,
} from '@medplum/core';

const fhirPathCache = new LRUCache(1_000);

/** Levels of JSON objects and arrays a resource may have; real resources use a few dozen at most. */
export const MAX_DEPTH = 128;

// Medplum's list: constraints it never evaluates.
const skippedConstraintKeys = { 'ele-1': true, 'dom-3': true, 'org-1': true, 'sdf-19': true };

/** Same contract as Medplum's validateResource(resource): the issues, or an OperationOutcomeError on any error. */
export function validateFhirResource(resource) {
  if (!resource.resourceType) {
    throw new OperationOutcomeError(validationError('Missing resource type'));
  }
  return new ResourceValidator(toTypedValue(resource)).validate();
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

/**
 * Throws validateFhirResource's "Nested too deeply" OperationOutcomeError when `resource` is nested past MAX_DEPTH,
 * reading no deeper than that: for code that walks a body before it is validated (Medplum's router, structuredClone).
 */
export function assertNotTooDeep(resource) {
  try {
    checkObjectForNull(resource, resource.resourceType, []);
  } catch (error) {
    if (error instanceof TooDeep) throw new OperationOutcomeError({ resourceType: 'OperationOutcome', issue: [error.issue] });
    throw error;
  }
}

// --- property access (Medplum's getTypedPropertyValueWithSchema, with the candidate names cached) ---

/** Per schema element: [propertyName, "_" + propertyName, typeCode] for each of its types. */
const candidateCache = new WeakMap();

function candidatesOf(element) {
  let candidates = candidateCache.get(element);
  if (!candidates) {
    const last = element.path.substring(element.path.lastIndexOf('.') + 1);
    candidates = element.type.map((t) => {
      const name = last.replace('[x]', capitalize(t.code));
      return [name, '_' + name, t.code];
    });
    candidateCache.set(element, candidates);
  }
  return candidates;
}

function safeAssign(target, source) {
  delete source.__proto__;
  delete source.constructor;
  return Object.assign(target, source);
}

function assignPrimitiveExtension(target, primitiveExtension) {
  if (primitiveExtension) {
    if (typeof primitiveExtension !== 'object') {
      throw new Error('Primitive extension must be an object');
    }
    return safeAssign(target ?? {}, primitiveExtension);
  }
  return target;
}

function toTypedValueWithType(value, type) {
  if (type === 'Resource' && isResource(value)) {
    type = value.resourceType;
  }
  return { type, value };
}

function propertyWithSchema(typedValue, element) {
  const value = typedValue.value;
  const types = element.type;
  if (!types || types.length === 0) {
    return undefined;
  }
  let resultValue = undefined;
  let resultType = 'undefined';
  let primitiveExtension = undefined;
  for (const [name, extensionName, code] of candidatesOf(element)) {
    resultValue = value[name];
    primitiveExtension = value[extensionName];
    if (resultValue !== undefined || primitiveExtension !== undefined) {
      resultType = code;
      break;
    }
  }
  if (primitiveExtension) {
    if (Array.isArray(resultValue)) {
      resultValue = resultValue.slice();
      for (let i = 0; i < Math.max(resultValue.length, primitiveExtension.length); i++) {
        resultValue[i] = assignPrimitiveExtension(resultValue[i], primitiveExtension[i]);
      }
    } else if (!resultValue && Array.isArray(primitiveExtension)) {
      resultValue = primitiveExtension.slice();
      for (let i = 0; i < primitiveExtension.length; i++) {
        resultValue[i] = assignPrimitiveExtension(undefined, primitiveExtension[i]);
      }
    } else {
      resultValue = assignPrimitiveExtension(resultValue, primitiveExtension);
    }
  }
  if (isEmpty(resultValue)) {
    return undefined;
  }
  if (resultType === 'Element' || resultType === 'BackboneElement') {
    resultType = element.type[0].code;
  }
  return Array.isArray(resultValue)
    ? resultValue.map((v) => toTypedValueWithType(v, resultType))
    : toTypedValueWithType(resultValue, resultType);
}

/**
 * getTypedPropertyValue(parent, key) for a key of `schema.elements`, where `schema` is the parent's own type schema
 * (always so while crawling): Medplum's getElementDefinition then finds exactly `schema.elements[key]`.
 */
function propertyOf(parent, key, schema) {
  if (!parent.value) {
    return undefined;
  }
  const element = schema.elements[key];
  return element ? propertyWithSchema(parent, element) : getTypedPropertyValueWithoutSchema(parent, key);
}

/** Medplum's withPath: the typed value(s) with their instance paths. */
function withPath(tv, parentPath, key) {
  const prefix = parentPath ? parentPath + '.' : '';
  if (Array.isArray(tv)) {
    return tv.map((v, idx) => ({ type: v.type, value: v.value, path: `${prefix}${key}[${idx}]` }));
  }
  return { type: tv.type, value: tv.value, path: `${prefix}${key}` };
}

// --- checks that need no validator state ---

/** Thrown by checkObjectForNull past MAX_DEPTH: validation stops there, before any deeper recursion. */
class TooDeep extends Error {
  constructor(path) {
    super('too deep');
    this.issue = createStructureIssue(path, `Nested too deeply: more than ${MAX_DEPTH} levels of objects and arrays`);
  }
}

function checkObjectForNull(obj, path, issues, depth = 1) {
  if (depth > MAX_DEPTH) {
    throw new TooDeep(path);
  }
  for (const key of Object.keys(obj)) {
    const value = obj[key];
    if (value === null) {
      issues.push(createStructureIssue(`${path}.${key}`, 'Invalid null value'));
    } else if (Array.isArray(value)) {
      const propertyPath = `${path}.${key}`;
      const partnerKey = key.startsWith('_') ? key.slice(1) : `_${key}`;
      for (let i = 0; i < value.length; i++) {
        if (value[i] === undefined) {
          issues.push(createStructureIssue(`${propertyPath}[${i}]`, 'Invalid undefined value'));
        } else if (value[i] === null && !obj[partnerKey]?.[i]) {
          // The one place FHIR JSON allows null: primitives in an array with extensions for only some of them.
          issues.push(createStructureIssue(`${propertyPath}[${i}]`, 'Invalid null value'));
        } else if (value[i] && typeof value[i] === 'object') {
          // Medplum also scans strings here (Object.entries of a string): they never hold a null.
          checkObjectForNull(value[i], `${propertyPath}[${i}]`, issues, depth + 2);
        }
      }
    } else if (typeof value === 'object') {
      checkObjectForNull(value, `${path}.${key}`, issues, depth + 1);
    }
  }
}

/** Per element map: key → [testProperty, elementName] of its choice-of-type element, or null. */
const choiceCache = new WeakMap();

function choiceElementOf(key, properties) {
  let byKey = choiceCache.get(properties);
  if (!byKey) {
    byKey = new Map();
    choiceCache.set(properties, byKey);
  }
  let found = byKey.get(key);
  if (found === undefined) {
    found = null;
    let testProperty = '';
    for (const part of key.split(/(?=[A-Z])/g)) {
      testProperty += part;
      const elementName = testProperty + '[x]';
      if (properties[elementName]) {
        found = [testProperty, elementName];
        break;
      }
    }
    byKey.set(key, found);
  }
  return found;
}

/** Medplum's isChoiceOfType. */
function isChoiceOfType(typedValue, key, properties) {
  let prefix = '';
  if (key.startsWith('_')) {
    key = key.slice(1);
    prefix = '_';
  }
  const found = choiceElementOf(key, properties);
  if (!found) {
    return undefined;
  }
  return getTypedPropertyValue(typedValue, found[0]) ? prefix + found[1] : undefined;
}

function matchesSpecifiedValue(value, element) {
  if (!element.pattern && !element.fixed) {
    return true;
  }
  const typeAndValue = Array.isArray(value)
    ? value.map((v) => ({ type: v.type, value: v.value }))
    : { type: value.type, value: value.value };
  if (element.pattern && !deepIncludes(typeAndValue, element.pattern)) {
    return false;
  }
  if (element.fixed && !deepEquals(typeAndValue, element.fixed)) {
    return false;
  }
  return true;
}

function checkSliceElement(value, slicingRules) {
  if (!slicingRules) {
    return undefined;
  }
  for (const slice of slicingRules.slices) {
    if (
      slicingRules.discriminator.every((discriminator) =>
        arrayify(getNestedProperty(value, discriminator.path))?.some((v) => matchDiscriminant(v, discriminator, slice)),
      )
    ) {
      return slice.name;
    }
  }
  return undefined;
}

// `r`, as in Medplum's bundle: a value whose `valueOf` is no function throws a TypeError that quotes this name.
function unpackPrimitiveElement(r) {
  if (typeof r.value !== 'object' || !r.value) {
    return [r, undefined];
  }
  const primitiveValue = r.value.valueOf();
  if (primitiveValue === r.value) {
    return [undefined, { type: 'Element', value: r.value }];
  }
  const primitiveKeys = new Set(Object.keys(primitiveValue));
  const extensionEntries = Object.entries(r.value).filter(([k]) => !primitiveKeys.has(k));
  const extensionElement = extensionEntries.length > 0 ? Object.fromEntries(extensionEntries) : undefined;
  return [
    { type: r.type, value: primitiveValue },
    { type: 'Element', value: extensionElement },
  ];
}

function isIntegerType(propertyType) {
  return propertyType === PropertyType.integer || propertyType === PropertyType.positiveInt || propertyType === PropertyType.unsignedInt;
}

// --- the validator: Medplum's ResourceValidator with its Crawler folded in ---

class ResourceValidator {
  constructor(typedValue) {
    this.issues = [];
    this.root = typedValue;
    this.currentResource = [];
    if (isResource(typedValue.value)) {
      this.currentResource.push(typedValue.value);
    }
    this.schema = getDataType(typedValue.type);
  }

  validate() {
    this.constraintsCheck({ ...this.root, path: this.schema.path }, this.schema);
    try {
      checkObjectForNull(this.root.value, this.schema.path, this.issues);
    } catch (error) {
      // Only the depth issue: the checks after this one recurse as deep as the value.
      if (error instanceof TooDeep) throw new OperationOutcomeError({ resourceType: 'OperationOutcome', issue: [error.issue] });
      throw error;
    }
    this.crawl(this.root, this.schema, this.schema.path);
    const issues = this.issues;
    if (issues.some((issue) => issue.severity === 'error')) {
      throw new OperationOutcomeError({ resourceType: 'OperationOutcome', issue: issues });
    }
    return issues;
  }

  /** Medplum's crawlTypedValue(typedValue, validator, { schema, initialPath: path }). */
  crawl(typedValue, schema, path) {
    this.crawlObject({ ...typedValue, path }, schema, path);
  }

  crawlObject(obj, schema, path) {
    const objIsResource = isResource(obj.value);
    if (objIsResource) {
      this.currentResource.push(obj.value);
    }
    for (const key of Object.keys(schema.elements)) {
      this.crawlProperty(obj, key, schema, `${path}.${key}`);
    }
    this.checkAdditionalProperties(obj, schema.elements, obj.path);
    if (objIsResource) {
      this.currentResource.pop();
    }
  }

  crawlProperty(parent, key, schema, path) {
    if (key === '$this' || key.includes('.')) {
      // Not a key of the base schemas; Medplum's general lookup, kept for exactness.
      return this.crawlValues(parent, key, schema, path, getNestedProperty(parent, key, { withPath: true }));
    }
    const tv = propertyOf(parent, key, schema);
    if (tv === undefined) {
      // Absent: Medplum visits a typed "undefined" value, which only its cardinality check can flag.
      if (schema.elements[key].min > 0) {
        const prefix = parent.path ? parent.path + '.' : '';
        this.issues.push(createStructureIssue(`${prefix}${key}`, 'Missing required property'));
      }
      return;
    }
    this.crawlValues(parent, key, schema, path, [withPath(tv, parent.path, key)]);
  }

  crawlValues(parent, key, schema, path, propertyValues) {
    this.visitProperty(parent, key, path, propertyValues, schema);
    for (const propertyValue of propertyValues) {
      if (propertyValue) {
        for (const value of arrayify(propertyValue)) {
          if (!isPrimitiveType(value.type)) {
            this.crawlObject(value, getDataType(value.type), path);
          }
        }
      }
    }
  }

  visitProperty(_parent, key, path, propertyValues, schema) {
    const element = schema.elements[key];
    if (!element) {
      throw new Error(`Missing element validation schema for ${key}`);
    }
    for (const value of propertyValues) {
      if (!this.checkPresence(value, element, path)) {
        return;
      }
      let values;
      if (element.isArray) {
        if (!Array.isArray(value)) {
          this.issues.push(createStructureIssue(path, 'Expected array of values for property'));
          return;
        }
        values = value;
      } else {
        if (Array.isArray(value)) {
          this.issues.push(createStructureIssue(path, 'Expected single value for property'));
          return;
        }
        values = [value];
      }
      if (values.length < element.min || values.length > element.max) {
        this.issues.push(
          createStructureIssue(
            element.path,
            `Invalid number of values: expected ${element.min}..${
              Number.isFinite(element.max) ? element.max : '*'
            }, but found ${values.length}`,
          ),
        );
      }
      if (!matchesSpecifiedValue(value, element)) {
        this.issues.push(createStructureIssue(path, 'Value did not match expected pattern'));
      }
      const sliceCounts = element.slicing ? Object.fromEntries(element.slicing.slices.map((s) => [s.name, 0])) : undefined;
      for (const v of values) {
        this.constraintsCheck(v, element);
        this.referenceTypeCheck(v, element);
        this.checkPropertyValue(v);
        const sliceName = checkSliceElement(v, element.slicing);
        if (sliceName && sliceCounts) {
          sliceCounts[sliceName] += 1;
        }
      }
      this.validateSlices(element.slicing?.slices, sliceCounts, path);
    }
  }

  checkPresence(value, field, path) {
    if (!Array.isArray(value) && value.value === undefined) {
      if (field.min > 0) {
        this.issues.push(createStructureIssue(value.path, 'Missing required property'));
      }
      return false;
    }
    if (isEmpty(value)) {
      this.issues.push(createStructureIssue(path, 'Invalid empty value'));
      return false;
    }
    return true;
  }

  checkPropertyValue(value) {
    if (isPrimitiveType(value.type)) {
      this.validatePrimitiveType(value);
    } else if (isEmpty(value.value)) {
      this.issues.push(createStructureIssue(value.path, `Invalid empty non-primitive value`));
    }
  }

  validateSlices(slices, counts, path) {
    if (!slices || !counts) {
      return;
    }
    for (const slice of slices) {
      const sliceCardinality = counts[slice.name];
      if (sliceCardinality < slice.min || sliceCardinality > slice.max) {
        this.issues.push(
          createStructureIssue(
            path,
            `Incorrect number of values provided for slice '${slice.name}': expected ${slice.min}..${
              Number.isFinite(slice.max) ? slice.max : '*'
            }, but found ${sliceCardinality}`,
          ),
        );
      }
    }
  }

  checkAdditionalProperties(parent, properties, path) {
    const object = parent.value;
    if (!object) {
      return;
    }
    const choiceOfTypeElements = {};
    for (const key of Object.keys(object)) {
      if (key === 'resourceType') {
        continue;
      }
      const choiceOfTypeElementName = isChoiceOfType(parent, key, properties);
      if (choiceOfTypeElementName) {
        let relatedElementName;
        let requiredRelatedElementName;
        if (choiceOfTypeElementName.startsWith('_')) {
          relatedElementName = choiceOfTypeElementName.slice(1);
          requiredRelatedElementName = key.slice(1);
        } else {
          relatedElementName = '_' + choiceOfTypeElementName;
          requiredRelatedElementName = '_' + key;
        }
        if (relatedElementName in choiceOfTypeElements && choiceOfTypeElements[relatedElementName] !== requiredRelatedElementName) {
          const name = choiceOfTypeElementName.startsWith('_') ? choiceOfTypeElementName.slice(1) : choiceOfTypeElementName;
          this.issues.push(
            createOperationOutcomeIssue(
              'warning',
              'structure',
              `Type of primitive extension does not match the type of property "${name}"`,
              choiceOfTypeElementName,
            ),
          );
        }
        if (choiceOfTypeElements[choiceOfTypeElementName]) {
          this.issues.push(
            createOperationOutcomeIssue(
              'warning',
              'structure',
              `Conflicting choice of type properties: "${key}", "${choiceOfTypeElements[choiceOfTypeElementName]}"`,
              key,
            ),
          );
        }
        choiceOfTypeElements[choiceOfTypeElementName] = key;
        continue;
      }
      if (!(key in properties) && !(key.startsWith('_') && key.slice(1) in properties)) {
        this.issues.push(createStructureIssue(`${path}.${key}`, `Invalid additional property "${key}"`));
      }
    }
  }

  constraintsCheck(value, field) {
    const constraints = field.constraints;
    if (!constraints) {
      return;
    }
    for (const constraint of constraints) {
      if (constraint.severity === 'error' && !(constraint.key in skippedConstraintKeys)) {
        if (!this.isExpressionTrue(constraint, value)) {
          this.issues.push(createConstraintIssue(value.path, constraint));
          return;
        }
      }
    }
  }

  referenceTypeCheck(value, field) {
    if (value.type !== 'Reference') {
      return;
    }
    const reference = value.value;
    if (!isReference(reference)) {
      return;
    }
    if (reference.reference.startsWith('#')) {
      return;
    }
    const referenceResourceType = reference.reference.includes('?') ? reference.reference.split('?')[0] : reference.reference.split('/')[0];
    if (!referenceResourceType) {
      return;
    }
    const targetProfiles = field.type.find((t) => t.code === 'Reference')?.targetProfile;
    if (!targetProfiles) {
      return;
    }
    const hl7BaseUrl = HTTP_HL7_ORG + '/fhir/StructureDefinition/';
    const hl7AllResourcesUrl = hl7BaseUrl + 'Resource';
    const hl7ResourceTypeUrl = hl7BaseUrl + referenceResourceType;
    const medplumBaseUrl = 'https://medplum.com/fhir/StructureDefinition/';
    const medplumResourceTypeUrl = medplumBaseUrl + referenceResourceType;
    for (const targetProfile of targetProfiles) {
      if (targetProfile === hl7AllResourcesUrl || targetProfile === hl7ResourceTypeUrl || targetProfile === medplumResourceTypeUrl) {
        return;
      }
      if (!targetProfile.startsWith(hl7BaseUrl) && !targetProfile.startsWith(medplumBaseUrl)) {
        return;
      }
    }
    this.issues.push(
      createOperationOutcomeIssue(
        'warning',
        'structure',
        `Invalid reference: got "${referenceResourceType}", expected "${targetProfiles.join('", "')}"`,
        value.path,
      ),
    );
  }

  isExpressionTrue(constraint, value) {
    const variables = { '%context': value, '%ucum': toTypedValue(UCUM) };
    if (this.currentResource.length > 0) {
      variables['%resource'] = toTypedValue(this.currentResource[this.currentResource.length - 1]);
    }
    if (isResource(this.root.value)) {
      variables['%rootResource'] = this.root;
    }
    try {
      const evalValues = evalFhirPathTyped(constraint.expression, [value], variables, fhirPathCache);
      return evalValues.length === 1 && evalValues[0].value === true;
    } catch (e) {
      this.issues.push(
        createProcessingIssue(value.path, 'Error evaluating invariant expression', e, {
          fhirpath: constraint.expression,
        }),
      );
      return false;
    }
  }

  validatePrimitiveType(typedValue) {
    const [primitiveValue, extensionElement] = unpackPrimitiveElement(typedValue);
    const path = typedValue.path;
    if (primitiveValue) {
      const { type, value } = primitiveValue;
      if (!(type in fhirTypeToJsType)) {
        this.issues.push(createStructureIssue(path, `Invalid JSON type: ${type} is not a valid FHIR type`));
        return;
      }
      const expectedType = fhirTypeToJsType[type];
      if (typeof value !== expectedType) {
        if (value !== null) {
          this.issues.push(createStructureIssue(path, `Invalid JSON type: expected ${expectedType}, but got ${typeof value}`));
        }
        return;
      }
      if (expectedType === 'string') {
        this.validateString(value, type, path);
      } else if (expectedType === 'number') {
        this.validateNumber(value, type, path);
      }
    }
    if (extensionElement) {
      this.crawl(extensionElement, getDataType('Element'), path);
    }
  }

  validateString(str, type, path) {
    if (!str.trim()) {
      this.issues.push(createStructureIssue(path, 'String must contain non-whitespace content'));
      return;
    }
    if (str.length > 1024 * 1024) {
      this.issues.push(createStructureIssue(path, 'String cannot be larger than 1 MB'));
      return;
    }
    const regex = validationRegexes[type];
    if (regex && !regex.exec(str)) {
      this.issues.push(createStructureIssue(path, 'Invalid ' + type + ' format'));
    }
  }

  validateNumber(n, type, path) {
    if (Number.isNaN(n) || !Number.isFinite(n)) {
      this.issues.push(createStructureIssue(path, 'Invalid numeric value'));
    } else if (isIntegerType(type) && !Number.isInteger(n)) {
      this.issues.push(createStructureIssue(path, 'Expected number to be an integer'));
    } else if (type === PropertyType.positiveInt && n <= 0) {
      this.issues.push(createStructureIssue(path, 'Expected number to be positive'));
    } else if (type === PropertyType.unsignedInt && n < 0) {
      this.issues.push(createStructureIssue(path, 'Expected number to be non-negative'));
    }
  }
}
