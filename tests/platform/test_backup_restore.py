"""The backup and restore commands of docs/production.md ("Backups and restore"), run
verbatim against this run's PostgreSQL: a dump of a database holding a draft, restored into a
new database, gives the draft back."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import psycopg
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = (ROOT / "docs" / "production.md").read_text()
RECEIVER = "0x8617E340B3D01FA5F11F306F4090FD50E238070D"


def _section_commands(heading: str) -> list[str]:
    section = PRODUCTION.split(heading, 1)[1].split("\n#", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S).group(1)
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip() and not line.startswith("#")]


def _url(name: str) -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{name}"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL backups")
def test_a_dump_restored_into_a_new_database_gives_the_draft_back(transactional_db, api_client, tmp_path):
    created = api_client.post(
        "/api/v1/drafts",
        {"network": "Base", "currency": "USDC", "fiatCurrency": "EUR", "fiatAmount": 123, "receiverAddress": RECEIVER},
        format="json",
    )
    assert created.status_code == 201, created.content
    draft = created.json()
    restored = f"{connection.settings_dict['NAME']}_restored"[:63]
    admin = _url("postgres")
    with psycopg.connect(admin, autocommit=True) as pg:
        pg.execute(f'DROP DATABASE IF EXISTS "{restored}"')
    env = os.environ | {
        "DATABASE_URL": _url(connection.settings_dict["NAME"]),
        "BACKUP": str(tmp_path / "payments.dump"),
    }
    try:
        for command in _section_commands("## Backups and restore"):
            command = command.replace("payments_restored", restored)  # this run's own name
            ran = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=120)  # noqa: S603, S607
            assert ran.returncode == 0, f"{command}\n{ran.stderr}"
        assert stat.S_IMODE((tmp_path / "payments.dump").stat().st_mode) == 0o600  # the owner's alone
        with psycopg.connect(_url(restored)) as copy:
            row = copy.execute(
                "SELECT receiver_address, amount_base_units, status FROM drafts_draft WHERE id = %s", [draft["id"]]
            ).fetchone()
            assert row == (RECEIVER, draft["amountSats"], "Pending")
            migrated = copy.execute("SELECT count(*) FROM django_migrations").fetchone()[0]
            assert migrated > 0
    finally:
        with psycopg.connect(admin, autocommit=True) as pg:
            pg.execute(f'DROP DATABASE IF EXISTS "{restored}" WITH (FORCE)')
