from __future__ import annotations

import pytest
from embit import ec, script
from embit.networks import NETWORKS
from solders.keypair import Keypair

from payments.addresses import InvalidAddress, validate_address
from payments.enums import Network

# Published vectors: bitcoin wiki, BIP13, BIP173, BIP350, BIP86.
BITCOIN_MAINNET = {
    "P2PKH": ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"],
    "P2SH": ["3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"],
    "P2WPKH": ["bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"],
    "P2WSH": ["bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3"],
    "P2TR": [
        "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297",
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
    ],
}
BITCOIN_TESTNET = {
    "P2PKH": ["mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn"],
    "P2SH": ["2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc"],
    "P2WPKH": ["tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"],
    "P2WSH": ["tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7"],
    "P2TR": ["tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c"],
}
SOLANA = [
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",  # USDC mint
    "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",  # SPL token program
    "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    str(Keypair.from_seed(bytes(range(32))).pubkey()),
]
# EIP-55's own test vectors, plus all-lowercase and all-uppercase forms.
EVM_CHECKSUMMED = [
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
]
EVM_NETWORKS = ["Ethereum", "Sepolia", "Base", "BaseSepolia"]


def _derived(chain: str) -> list[str]:
    """One address of each type from one key, derived with embit (independent of the validator)."""
    pub = ec.PrivateKey(bytes([7]) * 32).get_public_key()
    net = NETWORKS[chain]
    return [
        script.p2pkh(pub).address(net),
        script.p2sh(script.p2wpkh(pub)).address(net),
        script.p2wpkh(pub).address(net),
        script.p2wsh(script.p2pkh(pub)).address(net),
        script.p2tr(pub).address(net),
    ]


def _flip_one_char(address: str, index: int) -> str:
    alphabet = (
        "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
        if address[:3].lower() in ("bc1", "tb1")
        else "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    )
    current = address[index]
    replacement = next(c for c in alphabet if c != current)
    return address[:index] + replacement + address[index + 1 :]


def _rejected(network: str, address: str, field: str = "receiverAddress") -> InvalidAddress:
    with pytest.raises(InvalidAddress) as caught:
        validate_address(network, address, field=field)
    return caught.value


@pytest.mark.parametrize("kind,address", [(k, a) for k, items in BITCOIN_MAINNET.items() for a in items])
def test_it_accepts_every_bitcoin_mainnet_address_type(kind, address):
    assert validate_address("Mainnet", address) == address


@pytest.mark.parametrize("kind,address", [(k, a) for k, items in BITCOIN_TESTNET.items() for a in items])
def test_it_accepts_every_bitcoin_testnet_address_type(kind, address):
    assert validate_address("Testnet", address) == address


def test_it_accepts_addresses_derived_from_a_key_on_each_bitcoin_network():
    for address in _derived("main"):
        assert validate_address("Mainnet", address) == address
    for address in _derived("test"):
        assert validate_address("Testnet", address) == address


def test_it_lowercases_an_all_uppercase_bech32_address():
    upper = "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4"
    assert validate_address("Mainnet", upper) == upper.lower()


@pytest.mark.parametrize("address", [a for items in BITCOIN_MAINNET.values() for a in items])
def test_it_rejects_a_mainnet_address_on_testnet(address):
    error = _rejected("Testnet", address)
    assert error.code == "invalid_address"
    message = error.errors[0]["message"]
    assert f"not a {Network.TESTNET.label} address" in message  # the network asked for, by its name
    assert "(on " not in message  # and once


@pytest.mark.parametrize(
    ("network", "address"),
    [("Ethereum", "0xnot-an-address"), ("Solana", "not-base58!"), ("Mainnet", "bc1qnot-an-address")],
)
def test_an_invalid_address_names_its_network_once(network, address):
    message = _rejected(network, address).errors[0]["message"]

    assert message.count(Network(network).label) == 1, message


def test_a_reason_that_names_no_network_is_told_the_network():
    message = _rejected("Ethereum", "0x" + "0" * 40).errors[0]["message"]

    assert message == "The zero address burns whatever is sent to it. (on Ethereum)"


@pytest.mark.parametrize("address", [a for items in BITCOIN_TESTNET.values() for a in items])
def test_it_rejects_a_testnet_address_on_mainnet(address):
    error = _rejected("Mainnet", address)
    assert "testnet" in error.errors[0]["message"].lower()


@pytest.mark.parametrize("address", [a for items in BITCOIN_MAINNET.values() for a in items])
def test_it_rejects_a_bitcoin_address_with_one_changed_character(address):
    for index in (len(address) // 2, len(address) - 1):
        assert _rejected("Mainnet", _flip_one_char(address, index)).code == "invalid_address"


@pytest.mark.parametrize(
    "address",
    [
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t",  # one character short
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4q",  # one character long
        "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN",  # base58 truncated
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh",  # BIP350: v0 program encoded with bech32m
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd",  # BIP350: v1 with bech32 checksum
        "BC1SW50QGDZ25J",  # BIP350: valid witness v16, not a type a wallet can pay safely
        "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs",  # valid witness v2: unsupported type
        "bc1Qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",  # mixed case bech32
        "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx",  # testnet prefix on mainnet
    ],
)
def test_it_rejects_malformed_and_unsupported_bitcoin_addresses(address):
    assert _rejected("Mainnet", address).code == "invalid_address"


@pytest.mark.parametrize("network", ["Solana", "SolanaDevnet"])
@pytest.mark.parametrize("address", SOLANA)
def test_it_accepts_solana_public_keys(network, address):
    assert validate_address(network, address) == address


@pytest.mark.parametrize(
    "address",
    [
        "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwy",  # truncated: fewer than 32 bytes
        "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1vv",  # one character long
        "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt10",  # "0" is not base58
        "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDtIv",  # "I" is not base58
        "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",  # an EVM address
        "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
        "1111111111111111111111111111111111111111111111",  # decodes to more than 32 bytes
    ],
)
def test_it_rejects_what_is_not_a_32_byte_base58_key_on_solana(address):
    error = _rejected("Solana", address)
    assert "Solana" in error.errors[0]["message"]


@pytest.mark.parametrize("network", EVM_NETWORKS)
@pytest.mark.parametrize("address", EVM_CHECKSUMMED)
def test_it_accepts_eip55_addresses_and_their_single_case_forms(network, address):
    assert validate_address(network, address) == address
    assert validate_address(network, address.lower()) == address
    assert validate_address(network, "0x" + address[2:].upper()) == address


@pytest.mark.parametrize("address", EVM_CHECKSUMMED)
def test_it_rejects_a_mixed_case_evm_address_with_a_broken_checksum(address):
    index = next(i for i, c in enumerate(address) if i > 1 and c.isalpha())
    broken = address[:index] + address[index].swapcase() + address[index + 1 :]
    error = _rejected("Ethereum", broken)
    assert "EIP-55" in error.errors[0]["message"]


@pytest.mark.parametrize(
    "address",
    [
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe",  # 39 hex digits
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd",  # 41 hex digits
        "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",  # no 0x
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg",  # not hex
        "0x0000000000000000000000000000000000000000",  # burns funds
    ],
)
def test_it_rejects_malformed_evm_addresses(address):
    assert _rejected("Base", address).code == "invalid_address"


@pytest.mark.parametrize(
    "network,address",
    [
        ("Mainnet", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
        ("Solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
        ("Ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
    ],
)
@pytest.mark.parametrize("wrap", [" {}", "{} ", "\t{}\n", "{}\u200b"])
def test_it_rejects_surrounding_whitespace_instead_of_guessing(network, address, wrap):
    assert _rejected(network, wrap.format(address)).code == "invalid_address"


@pytest.mark.parametrize("network", ["Mainnet", "Testnet", "Solana", "SolanaDevnet", "Ethereum", "Base"])
@pytest.mark.parametrize("address", ["", "x" * 10 * 1024, "\x00", "😀" * 10])
def test_it_rejects_empty_huge_and_garbage_input_on_every_network(network, address):
    assert _rejected(network, address).code == "invalid_address"


def test_the_error_names_the_field_and_the_network():
    error = _rejected("Sepolia", "0x123", field="senderAddress")
    assert error.status_code == 400
    assert error.errors[0]["field"] == "senderAddress"
    assert error.errors[0]["code"] == "invalid_address"
    assert "Sepolia" in error.errors[0]["message"]
    assert error.extra["network"] == "Sepolia"


def test_solana_keys_carry_no_checksum_so_a_changed_character_is_only_caught_outside_the_alphabet():
    # Base58 Solana keys have no checksum: a substituted base58 character is another valid key.
    # What the validator can and does catch is a character outside the alphabet or a wrong length.
    assert _rejected("Solana", SOLANA[0][:-1] + "l").code == "invalid_address"


def test_a_solana_address_is_not_accepted_on_an_evm_network_or_bitcoin():
    assert _rejected("Ethereum", SOLANA[0]).code == "invalid_address"
    assert _rejected("Mainnet", SOLANA[0]).code == "invalid_address"


# Derived with embit from one key: signet shares testnet's encodings, regtest has bcrt1.
SIGNET = [
    "tb1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j20l03x8",
    "tb1pw53jtgez0wf69n06fchp0ctk48620zdscnrj8heh86wykp9mv20qn48hap",
]
REGTEST = [
    "bcrt1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j2dkku3w",
    "bcrt1pw53jtgez0wf69n06fchp0ctk48620zdscnrj8heh86wykp9mv20q7vd3gm",
    "bcrt1qv9eqw5ttwm5dcvgs4nqradsyvh2f3u0xy8el04llq06vhr2mhrmq9wcck0",
    "mvSvTtvD9H9fkgi8MGDyLALgRaR2LhnWFM",
    "2MwJZGrrQQko1S69xSeZt2bRmCSompaJ7in",
]


@pytest.mark.parametrize("address", SIGNET + [a for items in BITCOIN_TESTNET.values() for a in items])
def test_it_accepts_tb1_and_testnet_encodings_on_signet(address):
    assert validate_address("Signet", address) == address


@pytest.mark.parametrize("address", REGTEST)
def test_it_accepts_bcrt1_and_base58_test_encodings_on_regtest(address):
    assert validate_address("Regtest", address) == address


@pytest.mark.parametrize(
    ("network", "address", "named"),
    [
        ("Regtest", SIGNET[0], "testnet4"),
        ("Regtest", BITCOIN_MAINNET["P2WPKH"][0], "Bitcoin address"),
        ("Signet", REGTEST[0], "regtest"),
        ("Testnet", REGTEST[1], "regtest"),
        ("Mainnet", REGTEST[0], "regtest"),
    ],
)
def test_a_bitcoin_address_of_another_chain_is_refused_naming_that_chain(network, address, named):
    error = _rejected(network, address)
    assert error.code == "invalid_address" and named in error.errors[0]["message"]
