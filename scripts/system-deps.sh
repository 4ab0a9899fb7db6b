#!/usr/bin/env bash
# Installs the Debian packages that running the service needs (`scripts/system-deps.sh run`, from
# `make run`) or that the tests and benches need as well (`scripts/system-deps.sh test`, from
# `make test` and `make bench`), if missing. As root it runs apt-get itself, else through sudo.
#
# Running: WeasyPrint (PDF drafts) needs Pango, HarfBuzz and fonts (DejaVu covers Latin, Cyrillic and
# Arabic; the others draw Japanese, Chinese and Hindi in PDFs and in the browser); nginx puts the REST
# server and the MCP server behind one address (scripts/run.sh).
# Tests on top: poppler-utils reads PDFs; wrk measures the servers and valgrind counts their
# instructions (bench/); chromium drives the pages in browser tests (Python playwright,
# executable_path=/usr/bin/chromium); Electrum (python3-electrum, with python3-pyqt5 for its Send
# tab parser) reads the tx template's pay-to-many CSV and the BIP21 URIs; gettext (xgettext,
# msgmerge) extracts the translatable strings for `make lint` (scripts/check_translations.py);
# prometheus (with promtool) loads deploy/prometheus-rules.yml and shows each alert firing
# (tests/platform/test_alert_rules*.py); pgbouncer runs the API and a worker through a transaction-mode
# pool (tests/platform/test_pgbouncer.py).
set -euo pipefail
run_packages=(libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz0b fonts-dejavu-core fonts-ipafont-gothic fonts-wqy-microhei
  fonts-lohit-deva nginx)
test_packages=(poppler-utils wrk valgrind chromium python3-electrum python3-pyqt5 gettext
  prometheus pgbouncer)
case "${1:-}" in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "Installing Debian packages: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
