// An OpenAI-compatible model on loopback whose replies come from a script: `policy(messages)` returns the next
// assistant text. For MedAgentBench's text protocol (GET/POST/FINISH), where the model's whole output is text.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProtocolMessage {
  role: string;
  content: string;
}

/** The next reply's text, or an HTTP failure to answer with instead (e.g. a context overflow). */
export type ProtocolReply = string | { status: number; body: string };
export type ProtocolPolicy = (messages: ProtocolMessage[]) => ProtocolReply | Promise<ProtocolReply>;

export interface ScriptedProtocolModel {
  /** http://127.0.0.1:<port>/v1 */
  baseUrl: string;
  /** The message lists of every chat call, in order. */
  calls: ProtocolMessage[][];
  close(): Promise<void>;
}

export async function startScriptedProtocolModel(policy: ProtocolPolicy): Promise<ScriptedProtocolModel> {
  const calls: ProtocolMessage[][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        res.setHeader('content-type', 'application/json');
        if (req.method === 'GET' && req.url?.endsWith('/models'))
          return res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model' }] }));
        let body: { messages: ProtocolMessage[] };
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
          if (!Array.isArray(body.messages)) throw new Error('no messages');
        } catch {
          // Probes (a gateway's dialect check, a GET of another path) get a 404, not a script step.
          res.statusCode = 404;
          return res.end(JSON.stringify({ error: { message: `no ${req.method} ${req.url} here` } }));
        }
        calls.push(body.messages);
        const content = await policy(body.messages);
        if (typeof content !== 'string') {
          res.statusCode = content.status;
          return res.end(content.body);
        }
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
