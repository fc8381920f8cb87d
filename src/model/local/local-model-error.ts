// LOCAL_MODEL's one failure type: the server prints its message as one line and exits 78. Its own module, so the
// server can name it without importing node-llama-cpp (an optional peer dependency).
export class LocalModelError extends Error {
  override name = 'LocalModelError';
}
