// The official TypeScript SDK client (npm @modelcontextprotocol/sdk, in .peers) calling one tool that
// needs input, over stdio; prints {"protocol", "text"} as JSON.
//
//     node ts_mrtr_client.mjs TOOL CMD ARGS...
//
// It declares elicitation and roots, answers an elicitation with the name "Bob" and roots/list with no
// roots, as tests/peers/mrtr_input_client.py does: a recording that client made is served to this one.
const sdk = new URL("../../.peers/node_modules/@modelcontextprotocol/sdk/dist/esm/", import.meta.url);
const { Client } = await import(new URL("client/index.js", sdk));
const { StdioClientTransport } = await import(new URL("client/stdio.js", sdk));
const { ElicitRequestSchema, ListRootsRequestSchema } = await import(new URL("types.js", sdk));

const [tool, command, ...args] = process.argv.slice(2);
const client = new Client({ name: "ts-mrtr-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, roots: { listChanged: false } } });
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Bob" } }));
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }));
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
let protocol = null;  // the version initialize agreed (the client tells a transport that wants it)
transport.setProtocolVersion = (version) => { protocol = version; };
await client.connect(transport);
const result = await client.callTool({ name: tool, arguments: {} });
console.log(JSON.stringify({ protocol, text: result.content[0].text, isError: result.isError ?? false }));
await client.close();
