// An OpenAI-compatible model on loopback whose replies come from a script: `policy(messages)` returns the next
// assistant text. For MedAgentBench's text protocol (GET/POST/FINISH), where the model's whole output is text.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProtocolMessage {
  role: string;
  content: string;
}

export type ProtocolPolicy = (messages: ProtocolMessage[]) => string | Promise<string>;

export interface ScriptedProtocolModel {
  /** http://127.0.0.1:<port>/v1 */
  baseUrl: string;
  /** The message lists of every chat call, in order. */
  calls: ProtocolMessage[][];
  close(): Promise<void>;
}

export async function startScriptedProtocolModel(
  policy: ProtocolPolicy,
  opts: { failWith?: { status: number; body: string } } = {},
): Promise<ScriptedProtocolModel> {
  const calls: ProtocolMessage[][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        res.setHeader('content-type', 'application/json');
        if (req.method === 'GET' && req.url?.endsWith('/models'))
          return res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model' }] }));
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: ProtocolMessage[] };
        calls.push(body.messages);
        if (opts.failWith) {
          res.statusCode = opts.failWith.status;
          return res.end(opts.failWith.body);
        }
        const content = await policy(body.messages);
        res.end(
          JSON.stringify({
            id: `c${calls.length}`,
            object: 'chat.completion',
            created: 0,
            model: 'scripted',
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          }),
        );
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
