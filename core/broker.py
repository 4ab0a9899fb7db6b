"""The embedded default's broker: kombu's filesystem transport, made safe for several processes.

`make run` needs no broker server: messages are files under VAR_DIR/broker. kombu's transport
writes a message by creating its file and then writing it, so a worker polling the folder can
take a file while it is still empty (kombu then fails to decode it and the worker stops), and
the exchange table is rewritten in place the same way. It also sleeps a whole second whenever
the worker's prefetch window is full, which held a worker of 2 processes to about 2 tasks a
second. This transport:

- writes every message and exchange table to a temporary file in the same directory tree and
  renames it into place, so a reader sees the whole file or nothing;
- claims a message by renaming it into a folder of its own (same filesystem, atomic), and sets
  aside a file it cannot decode (in `damaged/`, with a warning) instead of stopping;
- polls every `polling_interval` seconds (0.05 by default) instead of every second.

Each message is a file without fsync: a crash of the machine may lose a queued message, which
costs nothing but time, since every task is a nudge and the beat ticks find the due work in the
database (docs/decisions.md, "The embedded broker").
"""

from __future__ import annotations

import fcntl
import logging
import os
import uuid
from collections.abc import Callable
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem, virtual
from kombu.transport.virtual import Empty
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)


def _write_atomically(path: str, data: bytes) -> None:
    """Write `data` to a hidden temporary file beside `path`, then rename it to `path`."""
    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class Channel(filesystem.Channel):
    """Filesystem channel with atomic writes and claims, and no stop on a damaged file."""

    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]  # as kombu-stubs' filesystem.Channel declares it (ignored there too)
        # Names sort by time (kombu's order), then by a random part; the dot rule of kombu's names
        # (queue after the first dot) holds, and a hidden temporary name is never a message.
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        try:
            _write_atomically(os.path.join(self.data_folder_out, name), dumps(payload).encode())
        except OSError as exc:
            raise ChannelError(f"Cannot add message {name!r} to the broker folder") from exc

    def _claim_folder(self) -> str:
        folder = os.path.join(os.path.dirname(os.path.abspath(self.data_folder_in)), "claimed")
        os.makedirs(folder, exist_ok=True)
        return folder

    def _get(self, queue: str) -> dict[str, Any]:  # type: ignore[override]  # as kombu-stubs' filesystem.Channel declares it (ignored there too)
        wanted = f"{queue}.msg"
        claimed = self._claim_folder()
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.startswith(".") or name.partition(".")[2] != wanted:
                continue
            path = os.path.join(claimed, name)
            try:
                os.rename(os.path.join(self.data_folder_in, name), path)
            except OSError:
                continue  # another consumer took it first
            try:
                with open(path, "rb") as file:
                    payload = file.read()
                message = loads(payload.decode())
                if not isinstance(message, dict):
                    raise ValueError("not a message")
            except (OSError, ValueError) as exc:
                damaged = os.path.join(os.path.dirname(claimed), "damaged")
                os.makedirs(damaged, exist_ok=True)
                try:
                    os.rename(path, os.path.join(damaged, name))
                except OSError:
                    pass
                logger.warning("Broker message %s could not be read (%s); set aside in %s", name, exc, damaged)
                continue
            os.unlink(path)
            return message
        raise Empty()

    def get_table(self, exchange: str) -> list[filesystem.exchange_queue_t]:  # type: ignore[override]  # as kombu-stubs' filesystem.Channel declares it (ignored there too)
        file = self._exchange_file(exchange)  # type: ignore[attr-defined]  # kombu's, missing from its stubs
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ChannelError(f"Cannot open {file}") from exc
        try:
            return [filesystem.exchange_queue_t(*row) for row in loads(data.decode())]
        except (ValueError, TypeError):
            logger.warning("Broker exchange table %s could not be read; taken as empty", file)
            return []

    def _update_table(self, exchange: str, change: Callable[[list[filesystem.exchange_queue_t]], bool]) -> None:
        """Read, change and atomically rewrite an exchange table, one writer at a time."""
        file = self._exchange_file(exchange)  # type: ignore[attr-defined]  # kombu's, missing from its stubs
        self.control_folder.mkdir(exist_ok=True)
        try:
            with open(f"{file}.lock", "ab") as lock_file:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
                try:
                    queues = self.get_table(exchange)
                    if change(queues):
                        _write_atomically(str(file), dumps(queues).encode())
                finally:
                    fcntl.flock(lock_file, fcntl.LOCK_UN)
        except OSError as exc:
            raise ChannelError(f"Cannot open {file}") from exc

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str | None, queue: str) -> None:
        row = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")

        def add(queues: list[filesystem.exchange_queue_t]) -> bool:
            if row in queues:
                return False
            queues.insert(0, row)
            return True

        self._update_table(exchange, add)

    def _delete(
        self, queue: str, exchange: str, routing_key: str, pattern: str | None, *args: Any, **kwargs: Any
    ) -> None:
        virtual.Channel._delete(self, queue, exchange, routing_key, pattern, *args, **kwargs)
        row = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")

        def remove(queues: list[filesystem.exchange_queue_t]) -> bool:
            if row not in queues:
                return False
            queues.remove(row)
            return True

        self._update_table(exchange, remove)


class Transport(filesystem.Transport):
    Channel = Channel
    polling_interval = 0.05
