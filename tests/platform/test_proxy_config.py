"""The proxy's configuration as deployed: compose publishes only nginx, and `make run` fits its
connections to the open-file limit."""

import os
import re
import resource
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.platform.test_proxy import ROOT, TEMPLATE, free_port, proxy_defaults


def test_compose_publishes_only_the_proxy_in_front_of_gunicorn():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    proxy, web, mcp = services["proxy"], services["web"], services["mcp"]
    assert proxy["image"].startswith("nginx:")  # the official image
    assert proxy["ports"] == ["443:443"]
    assert [name for name, service in services.items() if service.get("ports")] == ["proxy"]
    assert web["expose"] == ["8000"] and "0.0.0.0:8000" in web["command"]
    assert mcp["expose"] == ["8001"] and "8001" in mcp["command"]
    assert proxy["depends_on"] == {"web": {"condition": "service_healthy"}, "mcp": {"condition": "service_started"}}
    mounts = dict(volume.split(":")[:2] for volume in proxy["volumes"])
    assert mounts == {
        "./deploy/nginx.conf.template": "/etc/nginx/templates/nginx.conf.template",
        "./deploy/problems": "/etc/nginx/problems",
    }
    environment = proxy["environment"]
    assert environment["NGINX_ENVSUBST_OUTPUT_DIR"] == "/etc/nginx"  # the image renders templates there
    assert environment["WEB_UPSTREAM"] == "web:8000" and environment["MCP_UPSTREAM"] == "mcp:8001"
    assert environment["LISTEN"] == "443 ssl" and "/run/secrets/tls_certificate" in environment["NGINX_TLS"]
    # The limits' defaults come from the same file make run reads; the rest is set here.
    assert proxy["env_file"] == ["./deploy/nginx.env"]
    placeholders = set(re.findall(r"\$\{([A-Z_]+)\}", TEMPLATE.read_text()))
    defaults = proxy_defaults()
    assert placeholders <= set(environment) | set(defaults), placeholders - set(environment) - set(defaults)
    assert not set(environment) & set(defaults)
    assert set(proxy["secrets"]) == {"tls_certificate", "tls_private_key"} <= set(compose["secrets"])
    assert web["environment"]["TRUST_X_FORWARDED_PROTO"] == "true"
    assert web["environment"]["NUM_PROXIES"] == "1"
    template = TEMPLATE.read_text()
    assert "proxy_max_temp_file_size 0;" in template
    # Slow clients are cut after a few seconds; there is room for many connections.
    assert int(defaults["NGINX_HEADER_TIMEOUT"].removesuffix("s")) <= 10
    assert int(defaults["NGINX_BODY_TIMEOUT"].removesuffix("s")) <= 10
    assert int(defaults["NGINX_WORKER_CONNECTIONS"]) >= 4096
    assert int(defaults["NGINX_RLIMIT_NOFILE"]) >= int(defaults["NGINX_WORKER_CONNECTIONS"])


def render_make_run_conf(tmp_path: Path, script: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ) | {
        "NGINX_PREFIX": str(tmp_path),
        "NGINX_WORKERS": "1",
        "LISTEN": f"127.0.0.1:{free_port()}",
        "NGINX_TLS": "",
        "WEB_UPSTREAM": "127.0.0.1:9",
        "MCP_UPSTREAM": "127.0.0.1:9",
        "NGINX_PROBLEMS": str(ROOT / "deploy/problems"),
    }
    command = f"{script}\nexec scripts/nginx-conf.sh"
    return subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, check=True)


def test_make_run_fits_nginx_connections_to_the_open_file_limit(tmp_path):
    if not shutil.which("nginx"):
        pytest.skip("nginx is not installed")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    defaults = proxy_defaults()
    if hard == resource.RLIM_INFINITY or hard >= int(defaults["NGINX_RLIMIT_NOFILE"]):
        rendered = render_make_run_conf(tmp_path)
        assert f"worker_connections {defaults['NGINX_WORKER_CONNECTIONS']};" in rendered.stdout
        assert f"worker_rlimit_nofile {defaults['NGINX_RLIMIT_NOFILE']};" in rendered.stdout
        assert not rendered.stderr
    # Under a low hard limit, fewer connections (two descriptors each), and a note saying so.
    rendered = render_make_run_conf(tmp_path, "ulimit -n 1000")
    assert "worker_connections 500;" in rendered.stdout and "worker_rlimit_nofile 1000;" in rendered.stdout
    assert "open files are limited to 1000" in rendered.stderr
    # A setting of the environment (or .env) wins over deploy/nginx.env; nginx accepts the result.
    rendered = render_make_run_conf(tmp_path, "export NGINX_CONNECTIONS_PER_ADDRESS=7")
    assert "limit_conn connections_per_address 7;" in rendered.stdout
    (tmp_path / "nginx.conf").write_text(rendered.stdout)
    checked = subprocess.run(
        ["nginx", "-t", "-e", "stderr", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr


def test_make_run_serves_its_error_documents_from_where_nginx_workers_can_read_them(tmp_path):
    """Started as root, nginx's workers run as an unprivileged user: the problem documents must
    not sit behind a private directory (a checkout in a 0700 home), or every error is a 403."""
    rendered = render_make_run_conf(tmp_path, "unset NGINX_PROBLEMS").stdout  # make run's default
    served = {
        Path(line.split()[1].rstrip(";")).parent
        if line.split()[1].endswith(".json;")
        else Path(line.split()[1].rstrip(";/"))
        for line in rendered.splitlines()
        if line.strip().startswith("alias ")
    }
    assert len(served) == 1, served
    (directory,) = served
    assert sorted(p.name for p in directory.glob("*.json")) == sorted(
        p.name for p in (ROOT / "deploy/problems").glob("*.json")
    )
    if os.geteuid() != 0:
        assert directory == ROOT / "deploy/problems"  # nginx runs as this user: the checkout's own files
        return
    for ancestor in [directory, *directory.parents]:
        assert ancestor.stat().st_mode & 0o001, f"{ancestor} cannot be entered by others"
    for document in directory.glob("*.json"):
        assert (
            document.stat().st_mode & 0o004
            and document.read_bytes() == (ROOT / "deploy/problems" / document.name).read_bytes()
        )
    shutil.rmtree(directory)


def test_nginx_conf_lists_each_web_node_of_a_comma_separated_upstream(tmp_path):
    # Several web nodes behind one nginx (docs/production.md, "Several machines"); nginx accepts it
    rendered = render_make_run_conf(tmp_path, "export WEB_UPSTREAM=127.0.0.2:8000,127.0.0.3:8000").stdout
    web = re.search(r"upstream web \{(.*?)\}", rendered, flags=re.S).group(1)
    assert re.findall(r"server (\S+);", web) == ["127.0.0.2:8000", "127.0.0.3:8000"]
    mcp = re.search(r"upstream mcp \{(.*?)\}", rendered, flags=re.S).group(1)
    assert re.findall(r"server (\S+);", mcp) == ["127.0.0.1:9"]  # one node: as before
    if shutil.which("nginx"):
        (tmp_path / "nginx.conf").write_text(rendered)
        checked = subprocess.run(
            ["nginx", "-t", "-e", "stderr", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
            capture_output=True,
            text=True,
        )
        assert checked.returncode == 0, checked.stderr
