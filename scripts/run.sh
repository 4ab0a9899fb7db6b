#!/usr/bin/env bash
# Runs the web server, a Celery worker and Celery beat; Ctrl-C stops all three.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
PORT="${PORT:-8000}"
export DEBUG="${DEBUG:-true}"
export BASE_URL="${BASE_URL:-http://127.0.0.1:${PORT}}"
mkdir -p "${VAR_DIR:-var}"

"$PY" manage.py migrate --noinput
"$PY" manage.py collectstatic --noinput -v 0

pids=()
stop() {
  trap - INT TERM EXIT
  echo; echo "Stopping..."
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  # Give each process 10 s to finish its work, then make sure none is left behind.
  for _ in $(seq 1 20); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.5
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

.venv/bin/gunicorn config.wsgi:application --bind "127.0.0.1:${PORT}" --workers "${WEB_WORKERS:-2}" \
  --access-logfile - --graceful-timeout 5 &
pids+=($!)
.venv/bin/celery -A config worker --loglevel INFO --concurrency "${WORKER_CONCURRENCY:-2}" &
pids+=($!)
.venv/bin/celery -A config beat --loglevel INFO &
pids+=($!)

cat <<TXT

  Service:   ${BASE_URL}/
  API docs:  ${BASE_URL}/swagger   (OpenAPI: ${BASE_URL}/api/v1/schema)
  llms.txt:  ${BASE_URL}/llms.txt
  Admin:     ${BASE_URL}/admin/     (create a login: .venv/bin/python manage.py createsuperuser)
  Health:    ${BASE_URL}/healthz

  Get an API key:
    .venv/bin/python manage.py issue_api_key --email you@example.com --scopes drafts:read,drafts:write,rates:read,fees:read

  Press Ctrl-C to stop.
TXT
wait -n "${pids[@]}"
