// Runs a signed Solana Pay transaction in LiteSVM (an in-process Solana runtime with the SPL
// Token program) and prints its effects as getTransaction's meta shows them.
// stdin: {"mode": "blockhash"} -> {"blockhash"}
//        {"mode": "execute", "transaction": base64, "payer", "mint"|null, "decimals",
//         "tokenAccounts": [{"address", "owner", "amount"}]} -> {"signature", "accountKeys",
//         "preBalances", "postBalances", "preTokenBalances", "postTokenBalances", "err", "logs"}
"use strict";
const { LiteSVM, FailedTransactionMetadata } = require("litesvm");
const kit = require("@solana/kit");

const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const SOL = 1_000_000_000n;

function u64(value) {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value), true);
  return bytes;
}

function mintData(decimals, supply) {
  const data = new Uint8Array(82); // COption<authority> none, supply, decimals, initialized, no freeze authority
  data.set(u64(supply), 36);
  data[44] = decimals;
  data[45] = 1;
  return data;
}

function tokenAccountData(mint, owner, amount) {
  const codec = kit.getAddressCodec();
  const data = new Uint8Array(165); // mint, owner, amount, no delegate, state Initialized, not native
  data.set(codec.encode(mint), 0);
  data.set(codec.encode(owner), 32);
  data.set(u64(amount), 64);
  data[108] = 1;
  return data;
}

function account(svm, address, data) {
  svm.setAccount({
    address,
    data,
    executable: false,
    lamports: kit.lamports(svm.minimumBalanceForRentExemption(BigInt(data.length))),
    programAddress: TOKEN_PROGRAM,
    space: BigInt(data.length),
  });
}

function tokenBalances(svm, keys) {
  const codec = kit.getAddressCodec();
  const out = [];
  keys.forEach((key, index) => {
    const found = svm.getAccount(key);
    if (!found.exists || found.programAddress !== TOKEN_PROGRAM || found.data.length !== 165) return;
    const view = new DataView(found.data.buffer, found.data.byteOffset);
    out.push({
      accountIndex: index,
      mint: codec.decode(found.data.slice(0, 32)),
      owner: codec.decode(found.data.slice(32, 64)),
      amount: view.getBigUint64(64, true).toString(),
    });
  });
  return out;
}

function main(input) {
  const svm = new LiteSVM();
  if (input.mode === "blockhash") return { blockhash: svm.latestBlockhash() };
  svm.airdrop(input.payer, kit.lamports(10n * SOL));
  let supply = 0n;
  for (const t of input.tokenAccounts || []) supply += BigInt(t.amount);
  if (input.mint) account(svm, input.mint, mintData(input.decimals, supply));
  for (const t of input.tokenAccounts || []) account(svm, t.address, tokenAccountData(input.mint, t.owner, t.amount));

  const bytes = Buffer.from(input.transaction, "base64");
  const transaction = kit.getTransactionDecoder().decode(bytes);
  const message = kit.getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  const keys = message.staticAccounts;
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  const accountKeys = keys.map((pubkey, i) => ({
    pubkey,
    signer: i < numSignerAccounts,
    writable:
      i < numSignerAccounts ? i < numSignerAccounts - numReadonlySignerAccounts : i < keys.length - numReadonlyNonSignerAccounts,
  }));
  const balances = () => keys.map((k) => Number(svm.getBalance(k) ?? 0n));
  const preBalances = balances();
  const preTokenBalances = tokenBalances(svm, keys);
  const result = svm.sendTransaction(transaction);
  const failed = result instanceof FailedTransactionMetadata;
  const meta = failed ? result.meta() : result;
  return {
    signature: kit.getBase58Decoder().decode(meta.signature()),
    accountKeys,
    preBalances,
    postBalances: balances(),
    preTokenBalances,
    postTokenBalances: tokenBalances(svm, keys),
    err: failed ? result.toString() : null,
    logs: meta.logs(),
  };
}

let text = "";
process.stdin.on("data", (chunk) => (text += chunk));
process.stdin.on("end", () => process.stdout.write(JSON.stringify(main(JSON.parse(text)))));
