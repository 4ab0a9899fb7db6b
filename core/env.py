"""Typed readers for environment variables that fail loudly on bad values.

Every setting of the service comes from the environment through these helpers.
Secrets may also be given as ``NAME_FILE`` pointing at a file holding the value
(Docker and Kubernetes secrets).
"""

from __future__ import annotations

import os
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name)
    if value is None:
        if default is None:
            raise ImproperlyConfigured(f"Set the environment variable {name}.")
        return default
    return value


def env_secret(name: str, default: str | None = None) -> str | None:
    """Read NAME, or the contents of the file named by NAME_FILE."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={path!r} cannot be read: {exc}") from exc
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true or false).")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}.")
    return value


def env_decimal(name: str, default: str) -> Decimal:
    raw = os.environ.get(name, default)
    try:
        value = Decimal(raw)
    except InvalidOperation as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a decimal number.") from exc
    if not value.is_finite():
        raise ImproperlyConfigured(f"{name}={raw!r} is not a finite number.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def network_env_suffix(network: str) -> str:
    """The environment-variable spelling of a network name: BaseSepolia -> BASE_SEPOLIA.

    Every per-network setting (FEE_ADDRESS_, RPC_URL_, ESPLORA_URL_, BITCOIN_RPC_URL_,
    BITCOIN_SOURCE_) builds its name with this one function.
    """
    return "".join(("_" + c if c.isupper() and i else c) for i, c in enumerate(network)).upper()


LOCAL_ENV_FILE = Path(__file__).resolve().parent.parent / ".env"


def load_local_env() -> None:
    """Read the local settings file into the environment: ENV_FILE, by default the checkout's
    `.env` (written by `make run`); ENV_FILE set empty reads none (the test suite). Every entry
    point (manage.py, WSGI, ASGI, Celery) calls this before Django reads its settings."""
    path = os.environ.get("ENV_FILE")
    if path is None:
        load_env_file(LOCAL_ENV_FILE)
    elif path:
        if not Path(path).is_file():
            raise ImproperlyConfigured(f"ENV_FILE={path!r} is not a file.")
        load_env_file(Path(path))


def load_env_file(path: Path) -> None:
    """Fill os.environ from a KEY=value file (`make run` writes `.env`); the real environment wins.

    Lines are `NAME=value`; blank lines and lines starting with # are skipped; a value may be
    wrapped in single or double quotes. No variable expansion. A name set twice is used from its
    last line, with a warning on stderr naming both lines.
    """
    for name, value in env_file_values(path).items():
        os.environ.setdefault(name, value)


def env_file_values(path: Path) -> dict[str, str]:
    """The NAME=value pairs of a settings file (none if it is missing); a name set twice is taken
    from its last line, with a warning on stderr naming both lines."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        name, value = _env_line(path, number, line)
        if not name:
            continue
        if name in lines:
            # The last one wins, as where a shell sources the file; said, since one of them is ignored.
            sys.stderr.write(
                f"warning: {path}:{number} sets {name} again (also on line {lines[name]}); line {number} is used.\n"
            )
        values[name], lines[name] = value, number
    return values


def _env_line(path: Path, number: int, line: str) -> tuple[str, str]:
    """(name, value) of one line of a settings file; ("", "") for a blank line or a comment."""
    line = line.strip()
    if not line or line.startswith("#"):
        return "", ""
    name, sep, value = line.partition("=")
    name = name.strip().removeprefix("export ").strip()
    if not sep or not name.isidentifier():
        raise ImproperlyConfigured(f"{path}:{number} is not a NAME=value line.")
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return name, value


def env_file_set(path: Path, values: dict[str, str], *, comment: str = "") -> None:
    """Set NAME=value lines in a settings file: each name's first line is replaced in place, any
    later line of that name removed, names not yet there appended (under `comment`); every other
    line stays as it was. The file keeps its permissions (a new one is readable by its owner only)."""
    lines = path.read_text().splitlines() if path.exists() else []
    out: list[str] = []
    done: set[str] = set()
    for number, line in enumerate(lines, start=1):
        name, _ = _env_line(path, number, line)
        if name in values:
            if name not in done:
                out.append(f"{name}={values[name]}")
                done.add(name)
            continue
        out.append(line)
    missing = [name for name in values if name not in done]
    if missing:
        if out and out[-1].strip():
            out.append("")
        if comment:
            out += [f"# {text}" for text in comment.splitlines()]
        out += [f"{name}={values[name]}" for name in missing]
    text = "\n".join(out) + "\n"
    if path.exists():
        path.write_text(text)
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)


_RATE_PERIODS = ("s", "sec", "m", "min", "h", "hour", "d", "day")


def env_rate(name: str, default: str) -> str:
    """A rate limit such as ``10/hour``: a positive count per s, min, hour or day."""
    raw = os.environ.get(name, default).strip()
    count, _, period = raw.partition("/")
    if not count.isdigit() or int(count) < 1 or period not in _RATE_PERIODS:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a rate like 10/min (periods: s, min, hour, day).")
    return raw
