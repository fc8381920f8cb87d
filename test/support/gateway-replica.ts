// One gateway replica as its own process, configured only by its environment, as `npm start` runs it
// (src/composition/server.ts's startServer). Prints `READY <port>` on stdout once listening (its pino log lines go there too),
// and closes on SIGTERM. Started by test/support/gateway-replicas.ts.
import { startServer } from '../../src/composition/server.ts';

const server = await startServer(process.env);
process.stdout.write(`READY ${server.port}\n`);
process.once('SIGTERM', () => {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
