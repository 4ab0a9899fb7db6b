"""`manage.py devchain`: anvil as Sepolia and Base Sepolia with the test tokens, written into .env."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chainwatch import devchain
from core.env import LOCAL_ENV_FILE, env_file_set, env_file_values

ENV_COMMENT = "A local test chain (`manage.py devchain`): anvil as Sepolia and Base Sepolia with test tokens."


class Command(BaseCommand):
    help = (
        "Start anvil as Sepolia and Base Sepolia, deploy test USDC/USDT/EURC/WBTC tokens, write their settings "
        "into .env (replacing the keys it sets) and keep the chains running until Ctrl-C."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--sepolia-port", type=int, default=devchain.DEFAULT_PORTS["Sepolia"])
        parser.add_argument("--base-sepolia-port", type=int, default=devchain.DEFAULT_PORTS["BaseSepolia"])
        parser.add_argument(
            "--env-file", type=Path, default=None, help="The settings file to write (default: ENV_FILE, else .env)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        env_file = options["env_file"] or (Path(os.environ["ENV_FILE"]) if os.environ.get("ENV_FILE") else None)
        env_file = env_file or LOCAL_ENV_FILE
        ports = {"Sepolia": options["sepolia_port"], "BaseSepolia": options["base_sepolia_port"]}
        # Ctrl-C and a plain kill both stop the chains (nothing is left running).
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        chains: list[devchain.Chain] = []
        try:
            for network in devchain.DEV_NETWORKS:
                chain = devchain.start_anvil(network, ports[network], host=options["host"])
                chains.append(chain)
                devchain.deploy_tokens(chain)
                devchain.mine_every_second(chain)
            values = devchain.env_values(chains, current=env_file_values(env_file))
            env_file_set(env_file, values, comment=ENV_COMMENT)
            self._summary(chains, env_file)
            while all(chain.process is not None and chain.process.poll() is None for chain in chains):
                time.sleep(0.5)
            raise CommandError("anvil stopped; the chains are gone.")
        except devchain.DevchainError as exc:
            raise CommandError(str(exc)) from exc
        except KeyboardInterrupt:
            self.stdout.write("Stopping the chains.")
        finally:
            devchain.stop(chains)

    def _summary(self, chains: list[devchain.Chain], env_file: Path) -> None:
        for chain in chains:
            tokens = ", ".join(f"{currency} {address}" for currency, address in chain.tokens.items())
            self.stdout.write(f"{chain.network} (chain id {chain.w3.eth.chain_id}) at {chain.url}: {tokens}")
        payer = chains[0].w3.eth.accounts[0]
        self.stdout.write(
            f"Wrote the settings into {env_file}; restart `make run` to use them. Payer with ETH and every token: "
            f"{payer}. Pay a draft: .venv/bin/python manage.py devpay <draft or pay-link id>."
        )
        self.stdout.write("Ready. Ctrl-C stops the chains (they start fresh, with the same addresses, next time).")
        self.stdout.flush()
