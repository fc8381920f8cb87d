// Images go upstream unchanged, but only in forms every upstream understands: https URLs and base64 data URIs.
import { ApiError, invalidRequest } from './api-error.ts';

const DATA_URI = /^data:image\/(png|jpe?g|gif|webp);base64,([A-Za-z0-9+/]*={0,2})$/;

export function validateImageUrl(url: string, param: string, maxBytes: number): void {
  if (url.startsWith('data:')) {
    const m = DATA_URI.exec(url);
    if (!m || m[2]!.length % 4 !== 0 || m[2]!.length === 0) {
      throw invalidRequest(
        `Invalid image data URI at '${param}': expected data:image/{png,jpeg,gif,webp};base64,<data>.`,
        param,
        'invalid_image_url',
      );
    }
    const bytes = (m[2]!.length * 3) / 4 - (m[2]!.endsWith('==') ? 2 : m[2]!.endsWith('=') ? 1 : 0);
    if (bytes > maxBytes) {
      throw new ApiError(400, `Image at '${param}' is ${bytes} bytes; the limit is ${maxBytes}.`, { param, code: 'image_too_large' });
    }
    return;
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || parsed.protocol !== 'https:') {
    throw invalidRequest(`Invalid image URL at '${param}': only https URLs and base64 data URIs are accepted.`, param, 'invalid_image_url');
  }
}
