#!/usr/bin/env bash
# Installs a real LNbits (pinned) in its own venv under var/, for the Lightning end-to-end test
# (tests/e2e/test_lnbits.py runs it with its FakeWallet and SQLite). LNbits' own dependencies
# would clash with the service's, hence the separate venv. bitstring 5 breaks LNbits 1.6.2's
# import, so it is pinned below 5. A failed install is reported and leaves no half venv: the
# test then skips with a loud message.
set -uo pipefail
cd "$(dirname "$0")/.."
LNBITS_PIN="lnbits==1.6.2"
BITSTRING_PIN="bitstring==4.4.0"
venv=var/lnbits-venv
marker="$venv/.installed-${LNBITS_PIN}-${BITSTRING_PIN}"
[ -f "$marker" ] && exit 0
python=${PYTHON:-$(command -v python3.11 || command -v python3)}
mkdir -p var
rm -rf "$venv"
if "$python" -m venv "$venv" && "$venv/bin/pip" install -q "$LNBITS_PIN" "$BITSTRING_PIN"; then
  touch "$marker"
  echo "LNbits installed in $venv"
else
  rm -rf "$venv"
  echo "WARNING: LNbits could not be installed; the LNbits end-to-end test will be skipped." >&2
fi
exit 0
