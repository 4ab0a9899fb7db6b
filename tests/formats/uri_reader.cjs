// Parses payment URIs with the wallets' own npm libraries (package.json pins them):
// Solana Pay with @solana/pay's parseURL, EIP-681 with eth-url-parser. argv[2..] are URIs;
// prints one JSON line per URI or {error}.
const path = require("node:path");
const lib = (name) => require(path.join(process.cwd(), "node_modules", name));
const { parseURL } = lib("@solana/pay");
const { parse } = lib("eth-url-parser");

for (const uri of process.argv.slice(2)) {
  try {
    if (uri.startsWith("solana:")) {
      const p = parseURL(uri);
      console.log(JSON.stringify({
        recipient: String(p.recipient),
        amount: p.amount ?? null, // a JS number in this version
        splToken: p.splToken ? String(p.splToken) : null,
        reference: [].concat(p.reference || []).map(String),
        label: p.label ?? null,
        message: p.message ?? null,
        memo: p.memo ?? null,
      }));
    } else {
      const p = parse(uri);
      const params = Object.fromEntries(
        Object.entries(p.parameters || {}).map(([k, v]) => [k, typeof v === "number" ? BigInt(v).toString() : String(v)])
      );
      console.log(JSON.stringify({
        target: p.target_address,
        chainId: p.chain_id ?? null,
        functionName: p.function_name ?? null,
        parameters: params,
      }));
    }
  } catch (error) {
    console.log(JSON.stringify({ error: String(error.message) }));
  }
}
