#!/usr/bin/env bash
# Runs the web server (gunicorn), the MCP server (uvicorn), nginx in front of both on
# PORT, a Celery worker, a Celery worker for emails, Celery beat and the chain listener; any of them that stops is
# started again; Ctrl-C stops them all.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
# .env holds the keys and var/ the database and the broker's messages: everything written from
# here on (by this script and the processes it starts) is readable by this user only.
umask 077
new_key() { "$PY" -c 'import secrets; print(secrets.token_urlsafe('"$1"'))'; }

# Local settings: written once, git-ignored, read by manage.py and every process started here
# (the real environment wins over the file). Production mode, with plain HTTP because it
# serves on loopback only.
if [ ! -f .env ]; then
  cat > .env <<ENV
# Local settings written by \`make run\` (git-ignored; edit freely). manage.py, the web server,
# the worker and beat read this file; variables set in the environment win over it.
SECRET_KEY=$(new_key 50)
# Encrypts webhook secrets and authenticator keys in the database (docs/settings.md: rotation).
FIELD_ENCRYPTION_KEY=$(new_key 32)
DEBUG=false
# Plain HTTP: the service listens on 127.0.0.1 only. Behind TLS, drop these four lines.
SECURE_SSL_REDIRECT=false
SESSION_COOKIE_SECURE=false
CSRF_COOKIE_SECURE=false
SECURE_HSTS_SECONDS=0
# Emails: files under var/mail, readable by this user only (sign-in and reset codes are there);
# nothing prints them. To send them: EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend and
# EMAIL_HOST=...; to print them here instead: EMAIL_BACKEND=django.core.mail.backends.console.EmailBackend
EMAIL_BACKEND=notifications.mailfiles.EmailBackend
ENABLED_NETWORKS=Mainnet,Solana,Ethereum,Base,Testnet,SolanaDevnet,Sepolia,BaseSepolia
# A complete local test setup (docs/local-chain.md): operator fee addresses and a node, e.g.
# FEE_ADDRESS_SEPOLIA=0x...
# RPC_URL_SEPOLIA=http://127.0.0.1:8545
ENV
  echo "Wrote .env (local settings with a new SECRET_KEY and FIELD_ENCRYPTION_KEY)."
elif ! grep -q '^FIELD_ENCRYPTION_KEY' .env && [ -z "${FIELD_ENCRYPTION_KEY:-}${FIELD_ENCRYPTION_KEY_FILE:-}" ]; then
  # A .env from before secrets were encrypted at rest: `migrate` encrypts them with this key.
  printf '\n# Encrypts webhook secrets and authenticator keys in the database (docs/settings.md).\nFIELD_ENCRYPTION_KEY=%s\n' \
    "$(new_key 32)" >> .env
  echo "Added a new FIELD_ENCRYPTION_KEY to .env."
fi
chmod 600 .env  # an earlier .env may have been readable by others
# A .env from before emails went to files printed them, codes and all: move it to files too
# (once: a console backend chosen after this stays).
if grep -qx 'EMAIL_BACKEND=django.core.mail.backends.console.EmailBackend' .env && ! grep -q '^# Emails: ' .env; then
  "$PY" - <<'PY'
from pathlib import Path

env = Path(".env")
old = "EMAIL_BACKEND=django.core.mail.backends.console.EmailBackend\n"
new = (
    "# Emails: files under var/mail, readable by this user only (sign-in and reset codes are there);\n"
    "# nothing prints them. To print them here instead: EMAIL_BACKEND=django.core.mail.backends.console.EmailBackend\n"
    "EMAIL_BACKEND=notifications.mailfiles.EmailBackend\n"
)
env.write_text(env.read_text().replace(old, new, 1))
PY
  echo "Updated .env: emails now go to files under var/mail instead of this terminal."
fi
# Read from the last line up: a key set twice takes its last line, as manage.py reads the file
# (core/env.py, which also warns about it); the real environment still wins.
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in ''|'#'*) continue ;; esac
  name="${line%%=*}"; value="${line#*=}"
  [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
  [ -z "${!name+set}" ] && export "$name=$value"
done < <(tac .env)

PORT="${PORT:-8000}"
export BASE_URL="${BASE_URL:-http://127.0.0.1:${PORT}}"
VAR="$(realpath -m "${VAR_DIR:-var}")"
if [ -k "$VAR" ]; then
  echo "VAR_DIR=$VAR is a shared directory (sticky bit): give the service a directory of its own." >&2
  exit 1
fi
mkdir -p "$VAR/nginx"
# The SQLite database and the broker's messages: no other local user may read them, also
# where an earlier run made them under a looser umask (and the rest of var/ below).
chmod 700 "$VAR"
# nginx forwards the client's address; the apps trust exactly that one proxy.
export NUM_PROXIES="${NUM_PROXIES:-1}"
# The demo (README; settings in docs/settings.md): drafts on test networks paid to public test-vector addresses, and a
# simulator that pays and confirms them, so a draft's whole life shows without a node.
export DEMO_SIMULATE_PAYMENTS="${DEMO_SIMULATE_PAYMENTS:-true}"
# Trying it without internet: with no fresh live price the bundled, dated rate table prices
# drafts, and every surface says "not live" (docs/settings.md, "Money core"). Production leaves it off.
export RATES_BUNDLED_ALLOWED="${RATES_BUNDLED_ALLOWED:-true}"
export DEMO_ADDRESS_TESTNET="${DEMO_ADDRESS_TESTNET:-tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx}"
export DEMO_ADDRESS_SEPOLIA="${DEMO_ADDRESS_SEPOLIA:-0x52908400098527886E0F7030069857D2E4169EE7}"
export DEMO_ADDRESS_BASE_SEPOLIA="${DEMO_ADDRESS_BASE_SEPOLIA:-0x52908400098527886E0F7030069857D2E4169EE7}"
export DEMO_ADDRESS_SOLANA_DEVNET="${DEMO_ADDRESS_SOLANA_DEVNET:-9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM}"
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
WEB_PORT="$(free_port)"
MCP_PORT="$(free_port)"

"$PY" manage.py migrate --noinput
"$PY" manage.py collectstatic --noinput -v 0
chmod -R go-rwx "$VAR"  # collectstatic copies the packages' file modes

# --- Processes: started and kept running -------------------------------------------------
# Each process runs under `supervise`: when it exits on its own, it is started again (after 1 s,
# longer while it keeps failing at once) and a line says so; the others keep running.
# Each runs in a process group of its own (`set -m` while starting it), so Ctrl-C reaches this
# script alone, and the stop sends each process one TERM (it stops its own children: gunicorn's
# and the workers' pool processes) and kills what is left of its group after STOP_GRACE: no
# process gets a second signal in the middle of its own stop, none is started again while the
# others stop, and none is left behind. Waits are measured on the clock, not
# counted in sleeps, so a busy machine does not stretch them.
STOP_GRACE=10  # seconds each process has to finish its work before it is killed
pids=()
supervise() {  # supervise NAME COMMAND...
  local name="$1"; shift
  (
    child=""
    finish() {
      [ -n "$child" ] || exit 0
      kill -TERM "$child" 2>/dev/null || true  # it stops its own children (a worker's pool finishes its tasks)
      local until=$((SECONDS + STOP_GRACE))
      # Until the whole group is gone (a worker's pool processes outlive its main process briefly).
      while kill -0 -- "-$child" 2>/dev/null && [ "$SECONDS" -lt "$until" ]; do sleep 0.2; done
      kill -KILL -- "-$child" 2>/dev/null || true
      exit 0
    }
    trap finish TERM
    delay=1
    while :; do
      started=$SECONDS
      set -m; "$@" & child=$!; set +m
      status=0
      wait "$child" || status=$?
      # What it left of its group goes with it (the pool processes of a worker that was killed).
      kill -KILL -- "-$child" 2>/dev/null || true
      child=""
      if [ $((SECONDS - started)) -ge 30 ]; then delay=1; fi
      # Wait first: a stop's TERM that comes meanwhile (`finish`) is never reported as a crash.
      sleep "$delay" & wait $! || true
      echo "run.sh: the ${name} stopped (exit status ${status}); started it again after ${delay} s." >&2
      delay=$((delay * 2 > 30 ? 30 : delay * 2))
    done
  ) &
  pids+=($!)
}
stop() {
  trap - INT TERM EXIT
  trap '' INT  # a second Ctrl-C does not cut the stop short (it leaves no process behind either way)
  echo; echo "Stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  # Each supervisor gives its process STOP_GRACE seconds, then kills its group; it is gone by then.
  local until=$((SECONDS + STOP_GRACE + 3))
  while [ "$SECONDS" -lt "$until" ]; do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${PROBLEMS_COPY:-}" ] && rm -rf "$PROBLEMS_COPY"
  exit 0
}
trap stop INT TERM EXIT

# /metrics sums every process's counters from files here (prometheus-client's multiprocess
# mode); a fresh directory each start, so no dead process's values linger.
export PROMETHEUS_MULTIPROC_DIR="$VAR/metrics"
rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"

supervise "web server" .venv/bin/gunicorn config.wsgi:application --config deploy/gunicorn.conf.py \
  --bind "127.0.0.1:${WEB_PORT}" --workers "${WEB_WORKERS:-2}" \
  --access-logfile - --access-logformat '%(h)s "%(r)s" %(s)s %(b)s %(M)sms request_id=%({x-request-id}o)s' \
  --graceful-timeout 5
supervise "MCP server" .venv/bin/uvicorn mcp_server.asgi:application --host 127.0.0.1 --port "${MCP_PORT}" \
  --workers "${MCP_WORKERS:-1}" --timeout-graceful-shutdown 5 --no-server-header --no-proxy-headers \
  --log-config deploy/uvicorn-logging.json \
  --h11-max-incomplete-event-size 65536  # above nginx's 32 KB head (deploy/nginx.conf.template)
NGINX_PREFIX="$VAR/nginx" NGINX_WORKERS=1 LISTEN="127.0.0.1:${PORT}" NGINX_TLS="" \
  WEB_UPSTREAM="127.0.0.1:${WEB_PORT}" MCP_UPSTREAM="127.0.0.1:${MCP_PORT}" \
  scripts/nginx-conf.sh > "$VAR/nginx/nginx.conf"
# Started as root, the error documents are served from a copy nginx's workers can read: removed on stop.
PROBLEMS_COPY="$(grep -o '/tmp/payment-drafts-problems\.[A-Za-z0-9]*' "$VAR/nginx/nginx.conf" | head -1 || true)"
supervise "nginx" "$(command -v nginx || echo /usr/sbin/nginx)" -e stderr -p "$VAR/nginx" \
  -c "$VAR/nginx/nginx.conf" -g "daemon off;"
# LOG_FORMAT=json: no banners, so every line the worker and beat write is a JSON object.
QUIET=(); [ "${LOG_FORMAT:-}" = json ] && QUIET=(--quiet)
# The worker serves every queue; a second, small one serves only emails (sign-in codes among
# them), so an email never waits behind webhook deliveries (config/settings.py, CELERY_TASK_ROUTES).
supervise "worker" .venv/bin/celery -A config "${QUIET[@]}" worker --loglevel INFO --concurrency "${WORKER_CONCURRENCY:-2}" \
  -Q celery,email -n "worker@%h"
supervise "email worker" .venv/bin/celery -A config "${QUIET[@]}" worker --loglevel INFO --concurrency 1 -Q email -n "email@%h"
supervise "scheduler (beat)" .venv/bin/celery -A config "${QUIET[@]}" beat --loglevel INFO
# Reacts to new blocks as nodes announce them (eth_subscribe newHeads); beat's passes stay the fallback.
supervise "chain listener" "$PY" manage.py chainwatch_listen
# --- end of processes ----------------------------------------------------------------------

cat <<TXT

  Service:   ${BASE_URL}/
  API docs:  ${BASE_URL}/swagger   (OpenAPI: ${BASE_URL}/api/v1/schema)
  llms.txt:  ${BASE_URL}/llms.txt
  MCP:       ${BASE_URL}/mcp        (Streamable HTTP, same Bearer API key)
  Admin:     ${BASE_URL}/admin/     (.venv/bin/python manage.py createsuperuser, then an authenticator app at /dashboard/security/)
  Health:    ${BASE_URL}/healthz

  Get an API key:
    .venv/bin/python manage.py issue_api_key --email you@example.com --scopes drafts:read,drafts:write,rates:read,fees:read

  Settings: .env (see docs/settings.md)
$([ "${EMAIL_BACKEND:-}" = notifications.mailfiles.EmailBackend ] && echo "  Emails:    ${EMAIL_FILE_PATH:-$VAR/mail}/ (one file each; sign-in and reset codes are there)")
$("$PY" manage.py notices | sed 's/^/  /')

  Press Ctrl-C to stop.
TXT
while :; do wait || true; sleep 1; done
