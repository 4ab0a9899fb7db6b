"""New Python processes for the tests of start-up (settings read from the environment, the
checks of `manage.py check`), without paying for the third-party imports every time.

`run([sys.executable, "-c", code, ...])` or `run([sys.executable, "manage.py", ...])` answers as
`subprocess.run(..., capture_output=True, text=True)` would. The process is a child forked from
a parent Python started once per test run, which has imported only third-party libraries
(web3's elliptic curves, aiohttp, psycopg, ... : most of the second a start-up takes) and none of
the project, Django's settings or its app registry. The child takes the environment and working
directory it is given and then runs the code as the interpreter would, so config.settings,
django.setup() and every AppConfig.ready() run in it for the first time, as in a process of
its own. A child still running at `timeout` is killed and TimeoutExpired raised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# Third-party modules that read no setting of ours when imported (they look at the environment,
# if at all, when called). Django and DRF are not here: they read settings when first used.
PRELOADED = ("py_ecc", "web3", "eth_account", "aiohttp", "websockets", "psycopg", "solders", "redis", "pydantic")

PARENT = r"""
import importlib, json, os, runpy, signal, sys, time, traceback
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass

def child(job):
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(os.open(job["stdout"], os.O_WRONLY | os.O_TRUNC), 1)
    os.dup2(os.open(job["stderr"], os.O_WRONLY | os.O_TRUNC), 2)
    os.environ.clear()
    os.environ.update(job["env"])
    os.chdir(job["cwd"])
    argv = job["argv"]
    code = 0
    try:
        if argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path[0] = ""
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)

for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(job)
    deadline = time.monotonic() + job["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            answer = {"returncode": os.waitstatus_to_exitcode(status)}
            break
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            answer = {"timeout": True}
            break
        time.sleep(0.005)
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"""

_lock = threading.Lock()
_parent: subprocess.Popen | None = None


def _started() -> subprocess.Popen:
    global _parent
    if _parent is None or _parent.poll() is not None:
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
        _parent = subprocess.Popen(
            [sys.executable, "-c", PARENT, *PRELOADED],
            cwd=Path(__file__).resolve().parents[1],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    return _parent


def run(
    args: list[str], *, cwd: str | Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)`
    for `args` = [sys.executable, "-c", code, *argv] or [sys.executable, script, *argv]."""
    assert args[0] == sys.executable, args
    with _lock, tempfile.TemporaryDirectory() as scratch:
        out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
        out.touch()
        err.touch()
        job = {
            "argv": [str(a) for a in args[1:]],
            "cwd": str(cwd),
            "env": dict(env),
            "stdout": str(out),
            "stderr": str(err),
            "timeout": timeout,
        }
        parent = _started()
        parent.stdin.write(json.dumps(job) + "\n")
        parent.stdin.flush()
        answer = json.loads(parent.stdout.readline())
        stdout = out.read_text(errors="replace")
        stderr = err.read_text(errors="replace")
    if answer.get("timeout"):
        raise subprocess.TimeoutExpired(args, timeout, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(args, answer["returncode"], stdout, stderr)


def stop() -> None:
    global _parent
    if _parent is not None:
        _parent.stdin.close()
        _parent.wait(10)
        _parent = None
