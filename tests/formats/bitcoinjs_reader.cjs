// Reads PSBTs with bitcoinjs-lib (package.json pins it): argv[2] is the network
// (bitcoin, testnet, regtest), argv[3..] base64 PSBTs. Prints one JSON line per
// PSBT: {inputs, version, outputs: [[scriptPubKey hex, sats], ...]} or {error}.
// Scripts, not addresses: bitcoinjs-lib names a taproot output only with an ECC library loaded.
const path = require("node:path");
const { Psbt, networks } = require(path.join(process.cwd(), "node_modules", "bitcoinjs-lib"));

const network = networks[process.argv[2]];
for (const base64 of process.argv.slice(3)) {
  try {
    const psbt = Psbt.fromBase64(base64, { network });
    const outputs = psbt.txOutputs.map((o) => [Buffer.from(o.script).toString("hex"), o.value.toString()]);
    console.log(JSON.stringify({ inputs: psbt.txInputs.length, version: psbt.version, outputs }));
  } catch (error) {
    console.log(JSON.stringify({ error: String(error.message) }));
  }
}
