// Images go upstream unchanged, but only in forms every upstream understands: https URLs and base64 data URIs.
// The gateway never fetches an image, but a model server may: a URL that names credentials or a literal internal
// address (loopback, private, link-local, in any spelling the URL parser accepts) is refused before anything is sent.
import { isInternalHost } from '../../shared/is-internal-host.ts';
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
  if (parsed.username || parsed.password) {
    throw invalidRequest(`Invalid image URL at '${param}': URLs with credentials are not accepted.`, param, 'invalid_image_url');
  }
  // `parsed.hostname` is the WHATWG-normalised host: 0x7f.1 and 2130706433 are 127.0.0.1 by now.
  if (isInternalHost(parsed.hostname)) {
    throw invalidRequest(
      `Invalid image URL at '${param}': the host is a loopback, private or link-local address; use a public https URL or a data URI.`,
      param,
      'invalid_image_url',
    );
  }
}
