"""The OpenAPI document the server serves passes Spectral's OpenAPI rules (`spectral:oas`, npm
@stoplight/spectral-cli) with no error and no warning; a rule left out is argued in .spectral.yaml."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SPECTRAL = REPO / "node_modules" / ".bin" / "spectral"
SEVERITIES = {0: "error", 1: "warning", 2: "info", 3: "hint"}


def test_the_served_document_has_no_spectral_error_or_warning(anon_client, tmp_path):
    served = anon_client.get("/api/v1/schema")
    assert served.status_code == 200
    document = tmp_path / "openapi.json"
    document.write_bytes(served.content)
    assert json.loads(served.content)["openapi"].startswith("3.")
    run = subprocess.run(  # noqa: S603
        [
            str(SPECTRAL),
            "lint",
            "--ruleset",
            str(REPO / ".spectral.yaml"),
            "-f",
            "json",
            "-o",
            "found.json",
            "openapi.json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert (tmp_path / "found.json").exists(), run.stdout + run.stderr
    findings = json.loads((tmp_path / "found.json").read_text())
    serious = [
        f"{SEVERITIES[f['severity']]} {f['code']} at {'.'.join(map(str, f['path']))}: {f['message']}"
        for f in findings
        if f["severity"] <= 1
    ]
    assert serious == [], "\n".join(serious)


def test_every_rule_the_ruleset_turns_off_says_why():
    lines = (REPO / ".spectral.yaml").read_text().splitlines()
    rules = yaml.safe_load("\n".join(lines))["rules"]
    assert yaml.safe_load("\n".join(lines))["extends"] == ["spectral:oas"]
    for name in rules:
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{name}:"))
        assert lines[at - 1].strip().startswith("#"), f"{name}: no comment above it"
