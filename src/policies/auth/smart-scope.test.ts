import { describe, expect, it } from 'vitest';
import { parseSmartScopeSyntax } from '../../vocabulary/fhir/smart-scope-syntax.ts';
import { scopeGrantSchema } from './smart-scope.ts';

describe('parseSmartScopeSyntax', () => {
  it('reads v2 letters, v1 suffixes as their letters, and a search restriction', () => {
    expect(parseSmartScopeSyntax('system/Observation.rs')).toEqual({ context: 'system', resourceType: 'Observation', letters: 'rs' });
    expect(parseSmartScopeSyntax('user/*.read')).toEqual({ context: 'user', resourceType: '*', letters: 'rs' });
    expect(parseSmartScopeSyntax('patient/Condition.write')?.letters).toBe('cud');
    expect(parseSmartScopeSyntax('system/*.*')?.letters).toBe('cruds');
    expect(parseSmartScopeSyntax('patient/Observation.rs?category=laboratory')?.query).toBe('?category=laboratory');
  });

  it('is undefined for tokens that are not scopes', () => {
    for (const token of ['openid', 'launch/patient', 'system/Observation', 'system/Obs-ervation.rs', '']) {
      expect(parseSmartScopeSyntax(token)).toBeUndefined();
    }
  });

  it('is the syntax the API keys read: their policy refuses user/ and restrictions on top of it', () => {
    expect(scopeGrantSchema.safeParse('user/*.rs').error?.issues[0]?.message).toMatch(/user\/ scopes need a signed-in user/);
    expect(scopeGrantSchema.safeParse('system/Observation.rs?code=x').error?.issues[0]?.message).toMatch(/search restrictions/);
    expect(scopeGrantSchema.parse('system/Observation.read chat').scopes[0]?.interactions).toEqual(new Set(['read', 'search']));
  });
});
