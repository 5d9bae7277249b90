// The official TypeScript SDK client (npm @modelcontextprotocol/sdk 1.32, in .peers) running a 2025-11-25
// task that asks for input: server-everything's simulate-research-query with ambiguous: true. The SDK's
// experimental tasks client (callToolStream) polls tasks/get, and on input_required calls tasks/result,
// through which the server sends its elicitation/create (tagged with the task); the client answers it.
// Prints {"statuses", "text", "elicitations", "isError"} as JSON.
//
//     node ts_task_client.mjs stdio CMD ARGS...
//     node ts_task_client.mjs http URL
const sdk = new URL("../../.peers/node_modules/@modelcontextprotocol/sdk/dist/esm/", import.meta.url);
const { Client } = await import(new URL("client/index.js", sdk));
const { StdioClientTransport } = await import(new URL("client/stdio.js", sdk));
const { StreamableHTTPClientTransport } = await import(new URL("client/streamableHttp.js", sdk));
const { ElicitRequestSchema } = await import(new URL("types.js", sdk));

const [how, ...rest] = process.argv.slice(2);
const client = new Client({ name: "ts-task-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, tasks: {} } });
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push({ message: request.params.message, relatedTask: request.params._meta?.["io.modelcontextprotocol/related-task"] ?? null });
  return { action: "accept", content: { interpretation: "historical" } };
});
const transport = how === "http"
  ? new StreamableHTTPClientTransport(new URL(rest[0]))
  : new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: "inherit" });
await client.connect(transport);
const statuses = [];
let text = null, isError = null, error = null;
const stream = client.experimental.tasks.callToolStream(
  { name: "simulate-research-query", arguments: { topic: "tides", ambiguous: true } },
  undefined, { task: { ttl: 60000 }, timeout: 60000 });
for await (const message of stream) {
  if (message.type === "taskCreated") statuses.push(message.task.status);
  else if (message.type === "taskStatus") statuses.push(message.task.status);
  else if (message.type === "result") { text = message.result.content?.[0]?.text ?? null; isError = message.result.isError ?? false; }
  else if (message.type === "error") error = String(message.error?.message ?? message.error);
}
console.log(JSON.stringify({ statuses, text, isError, error, elicitations }));
await client.close();
