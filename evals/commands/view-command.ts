// `eval view LOG... [--port N]`: serves the viewer on 127.0.0.1 until interrupted; prints its URL.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { startViewServer } from '../view/view-server.ts';
import { EXIT, UsageError } from './run-command.ts';

const ViewArgsSchema = z.object({
  logs: z.array(z.string()).min(1, 'eval view needs at least one log'),
  port: z.coerce.number().int().min(0).max(65535).default(0),
});

export async function viewCommand(argv: string[], out: { write(s: string): unknown }): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { port: { type: 'string' } } });
  const parsed = ViewArgsSchema.safeParse({ logs: positionals, port: values.port });
  if (!parsed.success)
    throw new UsageError(parsed.error.issues.map((i) => `${i.path[0] === 'port' ? '--port: ' : ''}${i.message}`).join('; '));
  for (const p of parsed.data.logs) if (!existsSync(p)) throw new UsageError(`${p}: no such log`);
  let server;
  try {
    server = await startViewServer({ logs: parsed.data.logs, port: parsed.data.port });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES')
      throw new UsageError(`--port ${parsed.data.port}: ${code === 'EADDRINUSE' ? 'already in use' : 'not allowed'}`);
    throw err;
  }
  out.write(`eval view: ${server.url} (${parsed.data.logs.length} log(s); Ctrl-C to stop)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return EXIT.ok;
}
