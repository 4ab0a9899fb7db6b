"""Solana Pay transaction requests: the unsigned transaction a wallet signs and sends.

The transaction holds one instruction: a system transfer of the lamports for SOL, or an SPL
Token `TransferChecked` of the base units from the payer's associated token account to the
receiver's (the mint's decimals are checked by the token program, so a wallet cannot pay a
wrong scale). The draft's reference key rides on that instruction as a read-only, non-signer
account, as a Solana Pay transfer request would add it: the watcher finds the transaction by
it (chainwatch/solana.py). The fee payer is the payer's account; the service signs nothing.
"""

from __future__ import annotations

import base64
import struct

from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.message import Message
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.token.associated import get_associated_token_address
from solders.transaction import Transaction

TOKEN_PROGRAM = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
TRANSFER_CHECKED = 12  # the SPL Token instruction index


def transfer_transaction(
    *,
    payer: str,
    recipient: str,
    amount_base_units: int,
    mint: str | None,
    decimals: int,
    reference: str,
    blockhash: str,
) -> str:
    """The unsigned transaction, serialized and base64-encoded as Solana Pay answers it."""
    if amount_base_units <= 0:
        raise ValueError("amount_base_units must be positive")
    payer_key = Pubkey.from_string(payer)
    recipient_key = Pubkey.from_string(recipient)
    reference_meta = AccountMeta(Pubkey.from_string(reference), is_signer=False, is_writable=False)
    if mint is None:
        plain = transfer(TransferParams(from_pubkey=payer_key, to_pubkey=recipient_key, lamports=amount_base_units))
        instruction = Instruction(plain.program_id, plain.data, [*plain.accounts, reference_meta])
    else:
        mint_key = Pubkey.from_string(mint)
        instruction = Instruction(
            TOKEN_PROGRAM,
            struct.pack("<BQB", TRANSFER_CHECKED, amount_base_units, decimals),
            [
                AccountMeta(get_associated_token_address(payer_key, mint_key), is_signer=False, is_writable=True),
                AccountMeta(mint_key, is_signer=False, is_writable=False),
                AccountMeta(get_associated_token_address(recipient_key, mint_key), is_signer=False, is_writable=True),
                AccountMeta(payer_key, is_signer=True, is_writable=False),
                reference_meta,
            ],
        )
    message = Message.new_with_blockhash([instruction], payer_key, Hash.from_string(blockhash))
    return base64.b64encode(bytes(Transaction.new_unsigned(message))).decode()
