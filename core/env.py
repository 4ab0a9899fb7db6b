"""Typed readers for environment variables that fail loudly on bad values.

Every setting of the service comes from the environment through these helpers.
Secrets may also be given as ``NAME_FILE`` pointing at a file holding the value
(Docker and Kubernetes secrets).
"""

from __future__ import annotations

import os
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
    wrapped in single or double quotes. No variable expansion.
    """
    try:
        text = path.read_text()
    except FileNotFoundError:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        name = name.strip().removeprefix("export ").strip()
        if not sep or not name.isidentifier():
            raise ImproperlyConfigured(f"{path}:{number} is not a NAME=value line.")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        os.environ.setdefault(name, value)


_RATE_PERIODS = ("s", "sec", "m", "min", "h", "hour", "d", "day")


def env_rate(name: str, default: str) -> str:
    """A rate limit such as ``10/hour``: a positive count per s, min, hour or day."""
    raw = os.environ.get(name, default).strip()
    count, _, period = raw.partition("/")
    if not count.isdigit() or int(count) < 1 or period not in _RATE_PERIODS:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a rate like 10/min (periods: s, min, hour, day).")
    return raw
