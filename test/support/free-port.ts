// A loopback port that was free a moment ago: bound on port 0, then released.
// Good for a child process that wants a --port flag (redis-server, postgres,
// llama-cpp-python) and, right after it returns, as a port nothing listens on.
import { createServer, type AddressInfo } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
