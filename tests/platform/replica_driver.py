"""The service in one process with a read replica (DATABASE_REPLICA_URL), driven by
tests/platform/test_read_replica.py over stdin and stdout: one JSON command a line, one JSON
answer a line. Every statement is counted by the alias that ran it (Django's execute_wrapper
on each connection), so an answer says which database served a request.

Run as `python tests/platform/replica_driver.py` with DJANGO_SETTINGS_MODULE=tests.settings and
DATABASE_URL, DATABASE_REPLICA_URL pointing at the test's own primary and standby.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connections  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.utils import timezone  # noqa: E402
from prometheus_client import REGISTRY  # noqa: E402

from accounts.models import User  # noqa: E402
from accounts.scopes import ALL_SCOPES  # noqa: E402
from accounts.services import api_key_create  # noqa: E402
from accounts.stepup import STEP_UP_AT  # noqa: E402
from drafts.enums import DraftStatus  # noqa: E402
from mcp_server.server import execute  # noqa: E402
from mcp_server.tools import BY_NAME  # noqa: E402
from tests.factories import make_draft  # noqa: E402

STATEMENTS: list[tuple[str, str]] = []
CLIENTS: dict[str, Client] = {}
KEYS: dict[str, Any] = {}
ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"


def counting(alias: str):
    def wrapper(execute, sql, params, many, context):
        STATEMENTS.append((alias, " ".join(str(sql).split())))
        return execute(sql, params, many, context)

    return wrapper


def served(start: int) -> dict[str, list[str]]:
    by_alias: dict[str, list[str]] = {"default": [], "replica": []}
    for alias, sql in STATEMENTS[start:]:
        by_alias[alias].append(sql)
    return by_alias


def setup() -> dict[str, Any]:
    call_command("migrate", verbosity=0)
    owner = User.objects.create_user("owner@example.com", "correct horse battery staple")
    for name in ("A", "B"):
        client = Client()
        issued = api_key_create(user=owner, name=name, scopes=list(ALL_SCOPES))
        client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {issued.key}"
        KEYS[name] = issued.api_key
        CLIENTS[name] = client
    browser = Client()
    browser.force_login(owner)
    session = browser.session
    session[STEP_UP_AT] = time.time()
    session.save()
    CLIENTS["S"] = browser
    # One confirmed payment for the chart, one pending draft for the lists and the export.
    make_draft(owner, status=DraftStatus.CONFIRMED, confirmed_at=timezone.now(), usd_rate=1)
    make_draft(owner)
    return {}


def run(command: dict[str, Any]) -> dict[str, Any]:
    start = len(STATEMENTS)
    do = command["do"]
    answer: dict[str, Any] = {}
    if do == "setup":
        answer = setup()
    elif do == "create":
        body = {
            "network": "Ethereum",
            "currency": "USDC",
            "receiverAddress": ADDRESS,
            "amountSats": command.get("amount", 1_000_000),
        }
        response = CLIENTS[command["caller"]].post("/api/v1/drafts", body, content_type="application/json")
        answer = {"status": response.status_code, "id": response.json().get("id")}
    elif do == "mcp_create":  # the MCP server's tool call, as its HTTP handler runs it
        body = {"network": "Ethereum", "currency": "USDC", "receiverAddress": ADDRESS, "amountSats": command["amount"]}
        result = execute(BY_NAME["create_draft"], KEYS[command["caller"]], body)
        answer = {"error_result": result.is_error, "id": (result.structured_content or {}).get("id")}
    elif do == "mcp_list":
        result = execute(BY_NAME["list_drafts"], KEYS[command["caller"]], {"pageSize": 100})
        answer = {"ids": [item["id"] for item in (result.structured_content or {}).get("items", [])]}
    elif do == "list":
        response = CLIENTS[command["caller"]].get("/api/v1/drafts?pageSize=100")
        answer = {"status": response.status_code, "ids": [item["id"] for item in response.json().get("items", [])]}
    elif do == "export":
        response = CLIENTS["S"].get("/dashboard/drafts/?format=csv")
        rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
        answer = {"status": response.status_code, "ids": [row["id"] for row in rows]}
    elif do == "dashboard_list":
        response = CLIENTS["S"].get("/dashboard/drafts/")
        answer = {"status": response.status_code}
    elif do == "chart":
        response = CLIENTS["S"].get("/dashboard/")
        answer = {"status": response.status_code, "chart": "<svg" in response.content.decode()}
    elif do == "metrics":
        answer = {
            f"{s.labels['database']}/{s.labels['reason']}": s.value
            for metric in REGISTRY.collect()
            if metric.name == "database_replica_reads"
            for s in metric.samples
            if s.name.endswith("_total")
        }
    elif do == "settings":
        override_settings(**command["values"]).enable()
    answer["statements"] = served(start)
    return answer


def main() -> None:
    limits = {"read": "100000/min", "write": "100000/min"}
    with (
        override_settings(API_RATE_LIMITS=limits),
        connections["default"].execute_wrapper(counting("default")),
        connections["replica"].execute_wrapper(counting("replica")),
    ):
        for line in sys.stdin:
            try:
                answer = run(json.loads(line))
            except Exception as exc:  # the test shows it
                answer = {"error": f"{type(exc).__name__}: {exc}"}
            print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
