#!/usr/bin/env bash
# Prints the nginx configuration of `make run`: deploy/nginx.conf.template with the limits of
# deploy/nginx.env, where the environment (and so .env) wins. Each connection takes a file
# descriptor (two when passed on to an app): nginx raises its own limit up to the hard one
# (ulimit -Hn), and takes fewer connections when that is lower.
# The caller sets NGINX_PREFIX, NGINX_WORKERS, LISTEN, NGINX_TLS, WEB_UPSTREAM, MCP_UPSTREAM; the
# upstreams may list several nodes, comma-separated (WEB_UPSTREAM=10.0.0.2:8000,10.0.0.3:8000):
# one `server` line each, and a request a node cannot take goes to the next one.
set -euo pipefail
cd "$(dirname "$0")/.."

setting() { local value="${!1:-}"; echo "${value:-$(sed -n "s/^$1=//p" deploy/nginx.env)}"; }
connections="$(setting NGINX_WORKER_CONNECTIONS)"
files="$(setting NGINX_RLIMIT_NOFILE)"
hard="$(ulimit -Hn)"
if [ "$hard" != unlimited ] && [ "$hard" -lt "$files" ]; then
  files="$hard"
  if [ "$connections" -gt $((hard / 2)) ]; then
    connections=$((hard / 2))
    echo "Note: open files are limited to $hard (ulimit -Hn): nginx takes $connections connections." >&2
  fi
fi
# The error documents (problem+json). nginx started as root runs its workers as an unprivileged
# user, which cannot read a checkout under a private directory (a home of mode 0700): as root
# they are served from a copy in a fresh directory anyone may read.
problems="${NGINX_PROBLEMS:-$PWD/deploy/problems}"
if [ -z "${NGINX_PROBLEMS:-}" ] && [ "$(id -u)" = 0 ]; then
  problems="$(mktemp -d /tmp/payment-drafts-problems.XXXXXX)"
  cp deploy/problems/*.json "$problems/"
  chmod 755 "$problems" && chmod 644 "$problems"/*.json
fi
servers() { local list="${!1:?set $1}"; echo "${list//,/;
        server }"; }
NGINX_WORKER_CONNECTIONS="$connections" NGINX_RLIMIT_NOFILE="$files" \
  NGINX_PROBLEMS="$problems" WEB_UPSTREAM="$(servers WEB_UPSTREAM)" MCP_UPSTREAM="$(servers MCP_UPSTREAM)" \
  .venv/bin/python scripts/render_template.py --defaults deploy/nginx.env deploy/nginx.conf.template
