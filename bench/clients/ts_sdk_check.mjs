// Drive `loupe serve` with the official MCP TypeScript SDK (`@modelcontextprotocol/sdk` 1.x)
// over stdio and over Streamable HTTP: list the tools, search, read the top hit by its id, and
// replay the search's next call. Exits 1 on any failure.
//
// Usage: node bench/clients/ts_sdk_check.mjs LOUPE_BINARY REPOSITORY
// (install the SDK where node finds it: `npm install @modelcontextprotocol/sdk@1`, or
// `npm install @modelcontextprotocol/client@2` and LOUPE_TS_SDK=2).
import { spawn } from "node:child_process";

// SDK 1.x is `@modelcontextprotocol/sdk`; 2.x is `@modelcontextprotocol/client` (LOUPE_TS_SDK=2).
const two = process.env.LOUPE_TS_SDK === "2";
const { Client } = await import(two ? "@modelcontextprotocol/client" : "@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import(
  two ? "@modelcontextprotocol/client/stdio" : "@modelcontextprotocol/sdk/client/stdio.js"
);
const { StreamableHTTPClientTransport } = await import(
  two ? "@modelcontextprotocol/client" : "@modelcontextprotocol/sdk/client/streamableHttp.js"
);

const [binary, root] = process.argv.slice(2);
let failures = 0;

async function exercise(label, transport) {
  const client = new Client({ name: "ts-sdk-check", version: "1" });
  await client.connect(transport);
  const version = client.getServerVersion();
  const { tools } = await client.listTools();
  const names = tools.map((tool) => tool.name).sort().join(",");
  const search = await client.callTool({ name: "search", arguments: { query: "get_debug_flag", type: "symbol" } });
  const hit = search.structuredContent?.results?.[0];
  const read = await client.callTool({ name: "read", arguments: { candidate_id: hit?.[2] } });
  const next = search.structuredContent?.next_calls?.[0];
  const replay = next ? await client.callTool({ name: next.tool, arguments: next.arguments }) : { isError: true };
  const ok =
    names === "analyze,edit,manage,read,search" &&
    !search.isError && hit?.[0] === "src/flask/helpers.py" &&
    !read.isError && read.content[0].text.includes("def get_debug_flag") &&
    !replay.isError;
  console.log(`${label.padEnd(6)} ${ok ? "ok  " : "FAIL"} server ${version?.name} ${version?.version}; tools ${names}; ` +
    `top hit ${hit?.[0]}:${hit?.[1]}; read by id ${read.isError ? "refused" : "served"}; next call ${replay.isError ? "refused" : "served"}`);
  if (!ok) failures += 1;
  await client.close();
}

await exercise("stdio", new StdioClientTransport({ command: binary, args: ["serve", "--root", root] }));

const server = spawn(binary, ["serve", "--root", root, "--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
const url = await new Promise((resolve, reject) => {
  let seen = "";
  server.stderr.on("data", (chunk) => {
    seen += chunk;
    const found = seen.match(/serving MCP at (http:\/\/\S+)/);
    if (found) resolve(found[1]);
  });
  setTimeout(() => reject(new Error(`no endpoint announced: ${seen}`)), 20000);
});
try {
  await exercise("http", new StreamableHTTPClientTransport(new URL(url)));
} finally {
  server.kill("SIGTERM");
}
console.log(failures ? `${failures} failure(s)` : "2/2 passed");
process.exit(failures ? 1 : 0);
