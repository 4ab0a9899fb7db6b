"""Ten million drafts: what creation, reads, lists, the overview and a watcher pass cost when the
drafts table is full, side by side with the same accounts and an empty one.

Run from the repository root (PostgreSQL only; DATABASE_URL names the server):

    .venv/bin/python bench/scale_bench.py [--drafts 10000000] [--open 1000000] [--accounts 10000]

It builds a fresh database (`--db-name`, dropped at the end unless `--keep`), makes `--accounts`
accounts and measures once with no drafts ("empty"); then loads `--drafts` drafts in PostgreSQL
itself (INSERT ... SELECT over generate_series, the columns taken from the model, `--open` of them
Pending, the rest Confirmed, Expired or Cancelled over the past year; the measured account holds
1 % of them, every other account an equal share) and measures again ("full"). Each phase makes
`--samples` requests of each kind through the whole Django stack in this process (middleware,
authentication, DRF, views; no HTTP server, so the figures are the application's and the
database's):

- creation: POST /api/v1/drafts, fiat-priced, to addresses that hold open drafts, so the
  amount-uniqueness check (carried by the creation's INSERT) reads real rows;
- read: GET /api/v1/drafts/{id}; lists: the first page, a status filter, a network and currency
  filter, a page deep in the cursor, a search;
- the dashboard overview of the measured account (a signed-in session);
- a watcher pass over ten new blocks with one payment to an open draft (anvil as the node): its
  JSON-RPC calls, time, the database rows it read, the memory it took above what the process
  held before (its peak RSS, Linux), and whether the payment was matched.

With `--keep` the loaded database stays; `--full-db <its name>` measures the full side there
again (after a change of code or indexes: `manage.py migrate` it first) without loading again;
its watcher state is cleared first, as the anvil it followed is gone.

Creation and reads by id are measured at the end, on both databases in turn (`--rounds`, the
empty side kept as a copy made before the load), so that what the machine does meanwhile falls
on both sides alike. It prints p50/p99 per kind and the full/empty ratio of those two rates. The targets
(issue 46): rates at least 0.9 of the empty database's, list and filter p99 under 50 ms, the
overview under 200 ms, watcher calls per pass the same. Figures taken while other work runs on the
machine are not comparable with them: the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")  # environment-driven, no DEBUG-only files
os.environ["API_RATE_LIMIT_READS"] = "100000000/min"  # the figures show the work, not the throttle
os.environ["API_RATE_LIMIT_WRITES"] = "100000000/min"

import django  # noqa: E402

from bench.common import load_average  # noqa: E402

django.setup()

import urllib3.connection  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection, models, transaction  # noqa: E402
from django.test import Client  # noqa: E402

from accounts.models import User  # noqa: E402
from accounts.services import api_key_create  # noqa: E402
from drafts.enums import DraftStatus  # noqa: E402
from drafts.models import Draft  # noqa: E402
from payments.enums import Currency, FeePlacement, Method, Network  # noqa: E402

NETWORK = Network.ETHEREUM
BIG_SHARE = 100  # one draft in BIG_SHARE belongs to the measured account
ADDRESSES_PER_ACCOUNT = 4
CHUNK = 500_000
RPC_CALLS = {"count": 0}
_request = urllib3.connection.HTTPConnection.request


def _counting_request(self: Any, method: str, url: str, body: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Every JSON-RPC call the watcher sends (instrumentation of the HTTP library, not our code)."""
    try:
        parsed = json.loads(body) if body else None
        RPC_CALLS["count"] += len(parsed) if isinstance(parsed, list) else 1
    except (ValueError, TypeError):
        RPC_CALLS["count"] += 1
    return _request(self, method, url, body, *args, **kwargs)


urllib3.connection.HTTPConnection.request = _counting_request


def address(account: int, n: int) -> str:
    return "0x5ca1e" + f"{account * ADDRESSES_PER_ACCOUNT + n:035x}"  # no precompile, no zero address


def make_accounts(count: int) -> list[User]:
    users = [User.objects.create_user(f"scale-{n}@example.com") for n in range(count)]
    accounts_table(users)
    return users


def accounts_table(users: list[User]) -> None:
    """The load's numbering of the accounts, in a temporary table of this session."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE bench_accounts (n integer PRIMARY KEY, user_id bigint NOT NULL)")
        cursor.executemany("INSERT INTO bench_accounts VALUES (%s, %s)", [(n, u.pk) for n, u in enumerate(users)])


def use(database: str) -> None:
    """This process's queries go to `database` from now on (a new session)."""
    connection.close()
    connection.settings_dict["NAME"] = database


def copy_database(source: str, copy: str) -> None:
    """`copy` made from `source` by PostgreSQL (CREATE DATABASE ... TEMPLATE), with no session
    open on `source` meanwhile."""
    use("postgres")
    with connection.cursor() as cursor:
        # Sessions a watcher pass's threads left open on the bench's own database.
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [source],
        )
        cursor.execute(
            f"CREATE DATABASE {connection.ops.quote_name(copy)} TEMPLATE {connection.ops.quote_name(source)}"
        )
    use(source)


def drop_database(name: str) -> None:
    use("postgres")
    with connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)}")


def _literal(field: models.Field) -> tuple[str, list[Any]]:
    """A column's SQL value for a loaded row that sets nothing of its own: NULL or its default."""
    if field.null:
        return "NULL", []
    default = field.get_default()  # "" for a text field without one
    if default is None:
        raise SystemExit(f"scale bench: Draft.{field.name} needs a value in the load (no default, not null)")
    value = field.get_db_prep_save(default, connection)
    if isinstance(field, models.JSONField):
        return "%s::jsonb", [value]
    return "%s", [value]


def load_sql(accounts: int, open_every: int, token: str) -> tuple[str, list[Any]]:
    """One INSERT ... SELECT that writes the drafts numbered by `g` in [%s, %s] (bound last):
    every column of the model, from the expressions below or the field's default."""
    done = {DraftStatus.CONFIRMED: 0, DraftStatus.EXPIRED: 1, DraftStatus.CANCELLED: 2}
    closed = " ".join(f"WHEN {code} THEN '{status.value}'" for status, code in done.items())
    owner = f"(CASE WHEN g % {BIG_SHARE} = 0 THEN 0 ELSE 1 + g % ({accounts} - 1) END)" if accounts > 1 else "0"
    age = "(g % 525600) * interval '1 minute'"  # spread over a year, the newest first in numbering
    is_open = f"(g % {open_every} = 0)"
    expressions: dict[str, str] = {
        "id": "gen_random_uuid()",
        "user_id": "a.user_id",
        "network": f"'{NETWORK.value}'",
        "currency": f"'{Currency.USDC.value}'",
        "method": f"'{Method.SINGLE_OUTPUT.value}'",
        "token_address": f"'{token}'",
        "receiver_address": (
            f"'0x5ca1e' || lpad(to_hex({owner} * {ADDRESSES_PER_ACCOUNT} + g % {ADDRESSES_PER_ACCOUNT}), 35, '0')"
        ),
        "amount_base_units": "1000000 + g",
        "fiat_currency": "'EUR'",
        "fee_placement": f"'{FeePlacement.ACCRUED.value}'",
        "status": f"CASE WHEN {is_open} THEN '{DraftStatus.PENDING.value}' ELSE (CASE g % 3 {closed} END) END",
        "required_confirmations": "12",
        "memo": "'order ' || g",
        "order_id": "'order-' || g",
        "created_at": f"now() - {age}",
        "updated_at": f"now() - {age}",
        "expires_at": f"CASE WHEN {is_open} THEN now() + interval '1 day' ELSE now() - {age} + interval '1 hour' END",
        "confirmed_at": f"CASE WHEN NOT {is_open} AND g % 3 = 0 THEN now() - {age} + interval '5 minutes' END",
        "finalized_at": f"CASE WHEN NOT {is_open} AND g % 3 = 0 THEN now() - {age} + interval '10 minutes' END",
        "amount_held_until": (
            f"CASE WHEN NOT {is_open} AND {age} < interval '{settings.AMOUNT_RESERVATION_DAYS} days' "
            f"THEN now() - {age} + interval '{settings.AMOUNT_RESERVATION_DAYS} days' END"
        ),
    }
    columns, values, params = [], [], []
    for field in Draft._meta.concrete_fields:
        columns.append(connection.ops.quote_name(field.column))
        if field.column in expressions:
            values.append(expressions[field.column])
        else:
            sql, field_params = _literal(field)
            values.append(sql)
            params += field_params
    # Built from the model's metadata and this bench's own expressions.
    into = f"{connection.ops.quote_name(Draft._meta.db_table)} ({', '.join(columns)})"
    rows = (
        f"{', '.join(values)} FROM generate_series(%s::bigint, %s::bigint) AS g JOIN bench_accounts a ON a.n = {owner}"
    )
    sql = f"INSERT INTO {into} SELECT {rows}"  # noqa: S608
    return re.sub(r"%(?!s)", "%%", sql), params  # the modulo operator, not a placeholder


def load(args: argparse.Namespace, token: str, *, first: int = 1) -> None:
    """Drafts numbered `first` to `first + args.drafts - 1`."""
    sql, params = load_sql(args.accounts, max(1, args.drafts // max(1, args.open)), token)
    started, done = time.perf_counter(), 0
    while done < args.drafts:
        size = min(CHUNK, args.drafts - done)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [*params, first + done, first + done + size - 1])
        done += size
        print(f"  loaded {done:,} drafts ({time.perf_counter() - started:.0f} s)", flush=True)
    # As autovacuum would have left a table filled over a year: statistics, and the visibility
    # map that lets a count read the index alone (a freshly loaded table has none).
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")


def quantiles(timings: list[float]) -> tuple[float, float]:
    if len(timings) < 2:
        return timings[0] * 1000, timings[0] * 1000
    cuts = statistics.quantiles(timings, n=100)
    return cuts[49] * 1000, cuts[98] * 1000


def timed(call: Callable[[int], None], samples: int) -> list[float]:
    for n in range(3):  # warm: this path's statements and caches
        call(samples + n)
    timings = []
    for n in range(samples):
        started = time.perf_counter()
        call(n)
        timings.append(time.perf_counter() - started)
    return timings


def expect(response: Any, status: int, what: str) -> Any:
    if response.status_code != status:
        raise SystemExit(f"scale bench: {what} answered {response.status_code}: {response.content[:400]!r}")
    return response


class Watch:
    """anvil as the Ethereum node, a token as USDC, and one watcher pass measured."""

    def __init__(self) -> None:
        from tests.chainwatch.conftest import Anvil, _start_anvil

        self.process, url = _start_anvil(1)
        self.node = Anvil(url, 1)
        self.token = self.node.deploy_token()
        settings.CHAINWATCH_ENDPOINTS = {NETWORK.value: {"rpc_url": url}}
        settings.TOKEN_ADDRESSES = {Currency.USDC.value: {NETWORK.value: self.token.address}}

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def _memory_kb(field: str) -> int:
    """VmRSS (now) or VmHWM (the peak since the last reset) of this process, in KB (Linux)."""
    status = Path("/proc/self/status").read_text()
    found = re.search(rf"^{field}:\s+(\d+)", status, re.MULTILINE)
    return int(found.group(1)) if found else 0


def _reset_peak() -> bool:
    """Start VmHWM again from the current RSS (Linux 4.0+), so the pass's own peak is read."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def one_pass(watch: Watch, draft: Draft) -> dict[str, Any]:
    """Ten new blocks with one payment to `draft` in them: JSON-RPC calls, seconds, database rows
    the pass read, the peak memory it added (MB; None where the peak cannot be reset) and matched."""
    from chainwatch.networks import EVM
    from chainwatch.tasks import watcher_pass

    watcher_pass(NETWORK.value, EVM)  # the cursor starts at the head
    watch.node.pay_token(watch.token, draft.receiver_address, draft.amount_base_units)
    watch.node.mine(9)
    RPC_CALLS["count"] = 0
    rows = [0]

    def counting(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith(("SELECT", "WITH")):
            rows[0] += max(context["cursor"].rowcount, 0)
        return result

    resettable = _reset_peak()
    before = _memory_kb("VmRSS")
    started = time.perf_counter()
    with connection.execute_wrapper(counting):
        watcher_pass(NETWORK.value, EVM)
    took = time.perf_counter() - started
    peak = (_memory_kb("VmHWM") - before) / 1024 if resettable else None
    draft.refresh_from_db()
    return {
        "calls": RPC_CALLS["count"],
        "seconds": took,
        "rows": rows[0],
        "peak_mb": peak,
        "matched": draft.status != DraftStatus.PENDING,
    }


def forget_the_chain() -> None:
    """The kept database's watcher state followed the anvil of the run that loaded it, gone now:
    the pass starts again at this run's head (not below it, where the empty phase's payment
    would pay a draft of the kept database a second time and be reported)."""
    from chainwatch.models import Cursor, ObservedTransfer, SeenBlock, TransferQuorum, UnmatchedTransfer

    for model in (UnmatchedTransfer, TransferQuorum, ObservedTransfer, SeenBlock, Cursor):
        model.objects.all().delete()
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 0


class Side:
    """One database of the comparison, with the measured account and its key there."""

    def __init__(self, database: str, user: User, key: str) -> None:
        self.database, self.user, self.key = database, user, key
        self.api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {key}")


def creation_body(n: int) -> dict[str, Any]:
    return {
        "network": NETWORK.value,
        "currency": Currency.USDC.value,
        "receiverAddress": address(0, n % ADDRESSES_PER_ACCOUNT),
        "fiatCurrency": "EUR",
        "fiatAmount": round(10 + (n % 500) * 0.01, 2),  # a JSON number, as the API requires
        "memo": f"scale {n}",
    }


def alternating(sides: dict[str, Side], args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    """Creation and a read by id, measured on each side in turn for `args.rounds` rounds (the
    side going first alternating too), so that what the machine does meanwhile falls on both
    sides alike: measured one side after the other, the creation's ratio moved between 0.62
    and 1.27 in two runs of the same code on the same databases."""
    figures: dict[str, dict[str, list[float]]] = {label: {} for label in sides}
    per_round = max(1, args.samples // args.rounds)
    ids: dict[str, list[str]] = {}
    for label, side in sides.items():
        use(side.database)
        # The drafts an earlier run created ask the amounts this one asks at the same addresses:
        # still open, they would send every creation to its second try (a nudged amount), which
        # is not what a full table costs.
        Draft.objects.filter(user=side.user, memo__startswith="scale ").delete()
        drafts = Draft.objects.filter(user=side.user).order_by("?").values_list("id", flat=True)
        ids[label] = [str(i) for i in drafts[: args.rounds * (per_round + 3)]]
    for round_ in range(args.rounds):
        order = list(sides.items()) if round_ % 2 == 0 else list(reversed(sides.items()))
        for label, side in order:
            use(side.database)
            for name, timings in turn(side, ids[label], round_ * (per_round + 3), per_round).items():
                figures[label].setdefault(name, []).extend(timings)
    return figures


def turn(side: Side, ids: list[str], first: int, samples: int) -> dict[str, list[float]]:
    """`samples` creations (their bodies numbered from `first`) and reads by id on the database
    in use, each after its warm-up (this session's statements and caches)."""
    statements: list[float] = []

    def timing(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            if sql.lstrip().upper().startswith(("INSERT", "WITH")):
                statements.append(time.perf_counter() - started)

    def create(n: int) -> None:
        body = creation_body(first + n)
        expect(side.api.post("/api/v1/drafts", data=body, content_type="application/json"), 201, "creation")

    def read(n: int) -> None:  # drafts not read before in this run, as the creations' numbers
        expect(side.api.get(f"/api/v1/drafts/{ids[(first + n) % len(ids)]}"), 200, "read")

    with connection.execute_wrapper(timing):
        posts = timed(create, samples)
    return {
        "POST /api/v1/drafts": posts,
        "  its INSERT (carries the amount check)": statements,
        "GET  /api/v1/drafts/{id}": timed(read, samples),
    }


def phase(label: str, user: User, key: str, watch: Watch, args: argparse.Namespace) -> dict[str, Any]:
    """Lists, the overview and a watcher pass on the database in use."""
    api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {key}")
    session = Client(HTTP_HOST="127.0.0.1")
    session.force_login(user)
    figures: dict[str, Any] = {}
    deep = Draft.objects.filter(user=user).order_by("-created_at", "-id").values_list("id", flat=True)
    middle = str(deep[min(deep.count() - 1, args.deep)])
    lists = {
        "GET  /api/v1/drafts?limit=20": "?limit=20",
        "GET  ...?status=Pending": f"?status={DraftStatus.PENDING.value}&limit=20",
        "GET  ...?network=&currency=": f"?network={NETWORK.value}&currency=USDC&limit=20",
        f"GET  ...?startingAfter=<#{args.deep}>": f"?startingAfter={middle}&limit=20",
        "GET  ...?q=order-7": "?q=order-7&limit=20",
    }
    for name, query in lists.items():
        figures[name] = timed(lambda n, q=query, w=name: expect(api.get(f"/api/v1/drafts{q}"), 200, w), args.samples)
    figures["GET  /dashboard/ (overview)"] = timed(
        lambda n: expect(session.get("/dashboard/"), 200, "overview"), max(10, args.samples // 5)
    )
    target = Draft.objects.filter(user=user, status=DraftStatus.PENDING).order_by("created_at").first()
    assert target is not None
    figures["watcher pass"] = one_pass(watch, target)
    return figures


def report(empty: dict[str, Any], full: dict[str, Any], rounds: int) -> None:
    print(f"\n{'':44} {'empty p50':>10} {'p99':>8}   {'full p50':>10} {'p99':>8}  (ms)")
    for name, timings in empty.items():
        if name == "watcher pass":
            continue
        e50, e99 = quantiles(timings)
        f50, f99 = quantiles(full[name])
        print(f"{name:44} {e50:10.2f} {e99:8.2f}   {f50:10.2f} {f99:8.2f}")
    for name in ("POST /api/v1/drafts", "GET  /api/v1/drafts/{id}"):
        rate_empty, rate_full = len(empty[name]) / sum(empty[name]), len(full[name]) / sum(full[name])
        print(
            f"{name} rate: empty {rate_empty:.0f}/s  full {rate_full:.0f}/s  full/empty {rate_full / rate_empty:.2f} "
            f"(the two sides in turn, {rounds} rounds)"
        )
    for label, figures in (("empty", empty["watcher pass"]), ("full", full["watcher pass"])):
        peak = "n/a" if figures["peak_mb"] is None else f"{figures['peak_mb']:.0f} MB"
        print(
            f"watcher pass ({label}): {figures['calls']} JSON-RPC calls, {figures['seconds'] * 1000:.0f} ms, "
            f"{figures['rows']:,} database rows read, peak memory +{peak}, payment matched: {figures['matched']}"
        )
    print(load_average())


def measure(args: argparse.Namespace) -> None:
    random.seed(1)
    started = time.perf_counter()
    fresh = connection.settings_dict["NAME"]
    users = make_accounts(args.accounts)
    user = users[0]
    key = api_key_create(user=user, name="scale", scopes=["drafts:read", "drafts:write"]).key
    print(f"{args.accounts:,} accounts in {time.perf_counter() - started:.1f} s", flush=True)
    watch = Watch()
    copy = ""
    try:
        # A few drafts for the empty phase's read, lists and watcher pass; the rest after it.
        few = argparse.Namespace(drafts=BIG_SHARE * 10, open=BIG_SHARE, accounts=args.accounts)
        load(few, watch.token.address)
        empty = phase("empty", user, key, watch, args)
        if args.full_db:  # drafts loaded by an earlier run (--keep): measured there
            sides = {"empty": Side(fresh, user, key)}
            use(args.full_db)
            user = User.objects.get(email="scale-0@example.com")
            forget_the_chain()
            key = api_key_create(user=user, name="scale", scopes=["drafts:read", "drafts:write"]).key
        else:
            # The empty side kept as it is, for creation and reads measured in turn with the full one.
            copy = f"{fresh}_empty"[:63]
            copy_database(fresh, copy)
            sides = {"empty": Side(copy, user, key)}
            accounts_table(users)
            rest = argparse.Namespace(
                drafts=args.drafts - few.drafts, open=args.open - few.open, accounts=args.accounts
            )
            load(rest, watch.token.address, first=few.drafts + 1)
        full = phase("full", user, key, watch, args)
        sides["full"] = Side(connection.settings_dict["NAME"], user, key)
        both = alternating(sides, args)
        empty, full = {**both["empty"], **empty}, {**both["full"], **full}
        use(sides["full"].database)
        print(f"drafts: {Draft.objects.count():,}, open: {Draft.objects.filter(status=DraftStatus.PENDING).count():,}")
    finally:
        watch.close()
        if copy:
            drop_database(copy)
            use(fresh)
    report(empty, full, args.rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--drafts", type=int, default=10_000_000, help="drafts to load")
    parser.add_argument("--open", type=int, default=1_000_000, help="of which open (Pending)")
    parser.add_argument("--accounts", type=int, default=10_000, help="accounts owning them")
    parser.add_argument("--samples", type=int, default=300, help="requests of each kind per phase")
    parser.add_argument("--rounds", type=int, default=10, help="turns of creation and reads on each side")
    parser.add_argument("--deep", type=int, default=50_000, help="the cursor page read deep in the list")
    parser.add_argument("--db-name", default=f"scale_bench_{os.getpid()}", help="the fresh database")
    parser.add_argument("--keep", action="store_true", help="keep the database at the end (for --full-db)")
    parser.add_argument(
        "--full-db", default="", help="measure the full side on this database, loaded by an earlier run with --keep"
    )
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        raise SystemExit("The scale bench measures PostgreSQL: set DATABASE_URL to a PostgreSQL server.")
    connection.settings_dict.setdefault("TEST", {})["NAME"] = args.db_name
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    fresh = connection.settings_dict["NAME"]
    try:
        measure(args)
    finally:
        connection.close()
        connection.settings_dict["NAME"] = fresh  # never the --full-db one
        if not args.keep or args.full_db:
            connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    threading.current_thread().name = "scale-bench"
    main()
