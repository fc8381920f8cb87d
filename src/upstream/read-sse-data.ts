// Server-sent events → the `data` payload of each event. Comments (keep-alives) and other fields are dropped.

export async function* readSseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = '';
  let data: string[] = [];
  for await (const bytes of body) {
    buf += decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5));
      }
    }
  }
  buf += decoder.decode();
  if (buf.startsWith('data:')) data.push(buf.slice(buf.charCodeAt(5) === 32 ? 6 : 5));
  if (data.length) yield data.join('\n');
}
