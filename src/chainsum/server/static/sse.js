// A server-sent-events reader over fetch's ReadableStream, for the two streams the page reads: the session API's
// event stream (EventSource cannot send an Authorization header) and a streamed chat completion (a POST).
//
// Yields {kind: "event", event, data, id} at each blank line that ends an event with data, and
// {kind: "comment", text} for each comment line (the proxy announces a compaction on the OpenAI route as
// ": context_summarized {json}", which a plain SSE parser skips; the chat panel reads it).

export async function* readSSE(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = "";
  let data = [];
  let id = null;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        if (end < 0) break;
        if (buffer[end] === "\r" && end === buffer.length - 1) break; // a "\r\n" may be split across chunks
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (line === "") {
          if (data.length) yield { kind: "event", event: event || "message", data: data.join("\n"), id };
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) {
          yield { kind: "comment", text: line.slice(1).replace(/^ /, "") };
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = val;
        else if (field === "data") data.push(val);
        else if (field === "id" && !val.includes("\0")) id = val;
      }
    }
  } finally {
    reader.cancel().catch(() => {}); // the consumer stopped early, or the stream ended: let the connection go
  }
}
