// Completes the service's outputs-only PSBT (the tx-template's `psbt`) as a payer's wallet
// would, with bitcoinjs-lib: adds one P2WPKH input and a change output, signs, finalizes and
// prints the raw transaction's hex. The signer is bcoin's own secp256k1 (bcrypto, JavaScript
// backend): bitcoinjs-lib takes any {publicKey, sign(hash)} and brings no curve of its own.
// argv: psbt (base64), input txid, input vout, input sats, private key (hex), change address, change sats.
process.env.NODE_BACKEND = "js";
const { Psbt, networks, payments } = require("bitcoinjs-lib");
const secp256k1 = require("bcrypto/lib/secp256k1");

const [base64, txid, vout, value, privateHex, changeAddress, changeValue] = process.argv.slice(2);
const network = networks.regtest;
const key = Buffer.from(privateHex, "hex");
const publicKey = secp256k1.publicKeyCreate(key, true);
const psbt = Psbt.fromBase64(base64, { network });
const spent = payments.p2wpkh({ pubkey: publicKey, network });
psbt.addInput({ hash: txid, index: Number(vout), witnessUtxo: { script: spent.output, value: BigInt(value) } });
psbt.addOutput({ address: changeAddress, value: BigInt(changeValue) });
psbt.signInput(0, { publicKey, sign: (hash) => secp256k1.sign(Buffer.from(hash), key) });
psbt.finalizeAllInputs();
console.log(psbt.extractTransaction().toHex());
