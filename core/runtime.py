"""Process-wide runtime guards every entry point applies (web, worker, beat, and the MCP process).

py_ecc (imported by web3) raises the interpreter's recursion limit to 100,000 on import. With
that limit a deeply nested JSON body makes CPython's C parser overflow the C stack and the
process dies of SIGSEGV instead of raising RecursionError. ``apply_runtime_guards()`` sets a
sane limit and puts a finder first on ``sys.meta_path`` that sets it again as soon as such a
module has run: web3 stays unimported until a process uses it (only the chain watchers do),
which spares every web and worker process about 0.6 s of CPU at start.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

SANE_RECURSION_LIMIT = 1000
# Modules known to change the recursion limit when imported.
_LIMIT_RAISING_MODULES = frozenset({"py_ecc"})


class _LimitKeepingLoader(importlib.abc.Loader):
    """A module's own loader, then the sane recursion limit restored after its code has run."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def __getattr__(self, name: str) -> Any:  # the rest of the loader's API (resources, code)
        return getattr(self.loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        try:
            self.loader.exec_module(module)
        finally:
            sys.setrecursionlimit(SANE_RECURSION_LIMIT)


class _LimitKeepingFinder(importlib.abc.MetaPathFinder):
    """Finds the limit-raising modules through the rest of sys.meta_path and wraps their loader."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _LIMIT_RAISING_MODULES:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _LimitKeepingFinder) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _LimitKeepingLoader(spec.loader)
                return spec
        return None


def apply_runtime_guards() -> None:
    if not any(isinstance(finder, _LimitKeepingFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _LimitKeepingFinder())
    sys.setrecursionlimit(SANE_RECURSION_LIMIT)


def web_process_ready() -> None:
    """Finish a web worker's start-up before its first request: import the URLconf (every view,
    serializer and presenter module) now rather than during the first request, then move every
    object start-up made into the garbage collector's permanent generation (`gc.freeze`), so
    that each full collection walks only what requests made since, not Django, DRF and the
    project's modules (about 230,000 tracked objects). Each gunicorn worker imports the
    application itself (no preload), so each freezes its own."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (imports the URLconf and, through it, the views)
    start_up_frozen()


def start_up_frozen() -> None:
    """Every object start-up made moved to the garbage collector's permanent generation: a full
    collection then walks only what the process made since. The ASGI process calls it alone:
    with 10,000 pay-page waiters each full collection walked start-up's objects too."""
    import gc

    gc.collect()
    gc.freeze()


def open_files_raised() -> int:
    """Raise this process's soft limit on open files to its hard limit, and return it: each
    connection a process holds is a file (the ASGI process's long polls, 10,000 at once)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass  # the soft limit stays: docs/production.md says how to raise the hard one
    return soft
