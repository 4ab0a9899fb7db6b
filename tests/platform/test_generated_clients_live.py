"""Clients generated from the OpenAPI document by the common generators work against a live server:
openapi-python-client (PyPI) and openapi-typescript + openapi-fetch (npm; type-checked with
`tsc --strict`). Each creates a draft, lists drafts, creates a pay link and reads fees."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.drafts.conftest import ADDRESSES
from tests.mcp.conftest import free_port, server_env, stop_server
from tests.platform.test_openapi_clients import GENERATOR

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "node_modules" / ".bin"
DRAFT = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": ADDRESSES["Base"],
    "fiatCurrency": "EUR",
    "fiatAmount": 19.99,
}
PAY_LINK = {
    "fiatCurrency": "EUR",
    "fiatAmount": 20,
    "options": [{"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]}],
}


@pytest.fixture
def rest_server(tmp_path, settings):
    """The REST API under gunicorn on a free loopback port, on the test database."""
    port = free_port()
    log = tmp_path / "gunicorn.log"
    env = server_env(ENV_FILE="", API_RATE_LIMITS='{"read": "10000/min", "write": "10000/min"}')
    process = subprocess.Popen(  # noqa: S603
        [str(REPO / ".venv/bin/gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=REPO,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail("gunicorn stopped: " + log.read_text())
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


@pytest.fixture
def openapi_json(anon_client, tmp_path) -> Path:
    path = tmp_path / "openapi.json"
    path.write_bytes(anon_client.get("/api/v1/schema").content)
    return path


def test_a_python_client_from_openapi_python_client_works_against_a_live_server(
    rest_server, openapi_json, make_key, tmp_path, monkeypatch
):
    generated = subprocess.run(  # noqa: S603
        [str(GENERATOR), "generate", "--path", str(openapi_json), "--output-path", str(tmp_path / "py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    (package,) = [p.name for p in (tmp_path / "py").iterdir() if (p / "__init__.py").exists()]
    monkeypatch.syspath_prepend(str(tmp_path / "py"))
    try:
        api = importlib.import_module(package)
        models = importlib.import_module(f"{package}.models")
        ops = {
            name: importlib.import_module(f"{package}.api.{module}")
            for name, module in {
                "create_draft": "drafts.drafts_create",
                "list_drafts": "drafts.drafts_list",
                "create_link": "payment_requests.payment_requests_create",
                "draft_fees": "drafts.drafts_fees_retrieve",
                "schedule": "fees.fees_schedule_retrieve",
            }.items()
        }
        client = api.AuthenticatedClient(base_url=rest_server, token=make_key())

        draft = ops["create_draft"].sync(
            client=client, body=models.CreateDraftRequest.from_dict(DRAFT), idempotency_key="py-1"
        )
        assert isinstance(draft, models.DraftResponse), draft
        assert draft.fiat_amount == 19.99 and draft.status.value == "Pending"

        page = ops["list_drafts"].sync(client=client, page_size=5)
        assert [item.id for item in page.items] == [draft.id] and page.total == 1

        link = ops["create_link"].sync(client=client, body=models.CreatePaymentRequest.from_dict(PAY_LINK))
        assert isinstance(link, models.PaymentRequestResponse), link
        assert link.pay_url.startswith("http") and link.fiat_amount == 20

        fees = ops["draft_fees"].sync(client=client, id=draft.id)
        assert fees.to_dict()["draftId"] == str(draft.id)
        schedule = ops["schedule"].sync(client=client)
        assert schedule.tiers and schedule.min_fee_usd > 0
    finally:
        for name in list(sys.modules):
            if name == package or name.startswith(package + "."):
                del sys.modules[name]


CLIENT_TS = """
import createClient from "openapi-fetch";
import type { paths } from "./schema";

const client = createClient<paths>({
  baseUrl: process.env.BASE_URL,
  headers: { Authorization: `Bearer ${process.env.API_KEY}` },
});

async function main(): Promise<void> {
  const created = await client.POST("/api/v1/drafts", {
    body: DRAFT,
    params: { header: { "Idempotency-Key": "ts-1" } },
  });
  if (!created.data) throw new Error(JSON.stringify(created.error));
  const draftId: string = created.data.id;
  const amount: number | null | undefined = created.data.fiatAmount;

  const listed = await client.GET("/api/v1/drafts", { params: { query: { pageSize: 5 } } });
  if (!listed.data) throw new Error(JSON.stringify(listed.error));
  const ids: string[] = listed.data.items.map((item) => item.id);

  const link = await client.POST("/api/v1/payment-requests", { body: PAY_LINK });
  if (!link.data) throw new Error(JSON.stringify(link.error));
  const payUrl: string = link.data.payUrl;

  const fees = await client.GET("/api/v1/drafts/{id}/fees", { params: { path: { id: draftId } } });
  if (!fees.data) throw new Error(JSON.stringify(fees.error));
  const schedule = await client.GET("/api/v1/fees/schedule");
  if (!schedule.data) throw new Error(JSON.stringify(schedule.error));
  const minFee: number = schedule.data.minFeeUsd;

  const refused = await client.POST("/api/v1/drafts", {
    body: { ...DRAFT, fiatCurrency: "EURO" },
  });
  const problemCode: string | undefined = refused.error?.code;

  console.log(JSON.stringify({ draftId, amount, ids, payUrl, feesDraft: fees.data.draftId, minFee, problemCode }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
"""


def test_a_typescript_client_from_openapi_typescript_and_openapi_fetch_type_checks_and_works(
    rest_server, openapi_json, make_key
):
    for tool in ("openapi-typescript", "tsc"):
        if not (BIN / tool).exists():
            pytest.fail(f"{tool} is missing: run `npm install` (package.json pins it)")
    # Under the checkout, so the compiler and node find openapi-fetch in its node_modules.
    work = REPO / "var" / "test-clients" / uuid.uuid4().hex
    work.mkdir(parents=True)
    try:
        run = subprocess.run(  # noqa: S603
            [str(BIN / "openapi-typescript"), str(openapi_json), "-o", str(work / "schema.d.ts")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        # The bodies as literals in the source: the compiler checks them against the schema's types.
        source = CLIENT_TS.replace('from "./schema"', 'from "./schema.js"')
        source = source.replace("body: DRAFT,", f"body: {json.dumps(DRAFT)},")
        source = source.replace("{ ...DRAFT,", "{ ..." + json.dumps(DRAFT) + ",")
        source = source.replace("body: PAY_LINK", f"body: {json.dumps(PAY_LINK)}")
        (work / "client.mts").write_text(source)
        (work / "tsconfig.json").write_text(
            json.dumps(
                {
                    "compilerOptions": {
                        "strict": True,
                        "target": "ES2022",
                        "module": "NodeNext",
                        "moduleResolution": "NodeNext",
                        "types": [],
                        "lib": ["ES2022", "DOM"],
                        "skipLibCheck": False,
                        "outDir": "out",
                    },
                    "files": ["client.mts", "schema.d.ts"],
                }
            )
        )
        (work / "globals.d.ts").write_text(
            "declare const process: { env: Record<string, string | undefined>; exit(code: number): never };\n"
        )
        config = json.loads((work / "tsconfig.json").read_text())
        config["files"].append("globals.d.ts")
        (work / "tsconfig.json").write_text(json.dumps(config))

        compiled = subprocess.run(  # noqa: S603
            [str(BIN / "tsc"), "-p", str(work)], capture_output=True, text=True, timeout=300, cwd=work
        )
        assert compiled.returncode == 0, compiled.stdout + compiled.stderr  # 0 type errors under --strict

        ran = subprocess.run(  # noqa: S603, S607
            ["node", str(work / "out" / "client.mjs")],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": os.environ["PATH"], "BASE_URL": rest_server, "API_KEY": make_key()},
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        result = json.loads(ran.stdout)
        assert result["amount"] == 19.99 and result["ids"] == [result["draftId"]]
        assert result["feesDraft"] == result["draftId"] and result["minFee"] > 0
        assert result["payUrl"].startswith("http")
        assert result["problemCode"] == "invalid_currency"  # the problem document, typed
    finally:
        shutil.rmtree(work, ignore_errors=True)
