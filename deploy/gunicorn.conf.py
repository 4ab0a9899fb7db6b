"""gunicorn settings read by scripts/run.sh and docker-compose.yml (`--config`)."""


def child_exit(server, worker):
    """A worker gone: its live gauges leave /metrics (prometheus-client's multiprocess mode)."""
    import os

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
