"""Emailed codes are printed only by a backend the operator names: by default (DEBUG, and the
.env `make run` writes) each email is a file only this user can read, and nothing prints it."""

import os
import subprocess
import sys
from pathlib import Path

from tests import fresh

ROOT = Path(__file__).resolve().parents[2]
CODE = "493817"
SEND = (
    "import django; django.setup(); "
    "from notifications.emails import email_deliver; from notifications.models import EmailNotification; "
    "email_deliver(EmailNotification(to='you@example.com', kind='email_code', "
    f"context={{'purpose': 'login', 'code': '{CODE}'}}))"
)


def send_a_code(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean |= {"ENV_FILE": "", "DJANGO_SETTINGS_MODULE": "config.settings", "VAR_DIR": str(tmp_path / "var")}
    return fresh.run([sys.executable, "-c", SEND], cwd=ROOT, env=clean | env, timeout=60)


def run_sh_env_lines() -> list[str]:
    """The settings lines of the .env that `make run` writes on its first start."""
    script = (ROOT / "scripts" / "run.sh").read_text()
    block = script.split("cat > .env <<ENV\n", 1)[1].split("\nENV\n", 1)[0]
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_with_debug_and_no_backend_named_a_code_goes_to_a_private_file_and_is_not_printed(tmp_path):
    sent = send_a_code(tmp_path, DEBUG="true")
    assert sent.returncode == 0, sent.stderr
    assert CODE not in sent.stdout and CODE not in sent.stderr
    folder = tmp_path / "var" / "mail"
    assert folder.stat().st_mode & 0o077 == 0
    (message,) = folder.iterdir()
    assert CODE in message.read_text()


def test_the_env_make_run_writes_keeps_codes_off_the_terminal(tmp_path):
    generated = ("SECRET_KEY=", "FIELD_ENCRYPTION_KEY=")  # made by run.sh at its first start
    settings = dict(line.split("=", 1) for line in run_sh_env_lines() if not line.startswith(generated))
    sent = send_a_code(tmp_path, SECRET_KEY="k" * 50, FIELD_ENCRYPTION_KEY="f" * 43, **settings)
    assert sent.returncode == 0, sent.stderr
    assert CODE not in sent.stdout and CODE not in sent.stderr
    (message,) = (tmp_path / "var" / "mail").iterdir()
    assert CODE in message.read_text()


def test_a_console_backend_the_operator_names_prints_the_code(tmp_path):
    sent = send_a_code(tmp_path, DEBUG="true", EMAIL_BACKEND="django.core.mail.backends.console.EmailBackend")
    assert sent.returncode == 0, sent.stderr
    assert CODE in sent.stdout
    assert not (tmp_path / "var" / "mail").exists()
