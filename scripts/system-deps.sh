#!/usr/bin/env bash
# Installs the Debian packages the service and its tests need, if missing.
# WeasyPrint (PDF drafts) needs Pango, HarfBuzz and a font; poppler-utils reads PDFs in tests;
# nginx puts the REST server and the MCP server behind one address (make run); wrk measures them and
# valgrind counts their instructions (bench/);
# chromium drives the pages in browser tests (Python playwright, executable_path=/usr/bin/chromium);
# Electrum (python3-electrum, with python3-pyqt5 for its Send tab parser) reads the tx template's
# pay-to-many CSV and the BIP21 URIs in tests.
# gettext (xgettext, msgmerge) extracts the translatable strings for `make lint` (scripts/check_translations.py);
# the fonts draw Japanese, Chinese and Hindi in PDFs and in the browser (DejaVu covers Latin, Cyrillic, Arabic).
set -euo pipefail
packages=(libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz0b fonts-dejavu-core poppler-utils nginx wrk valgrind chromium python3-electrum python3-pyqt5
  gettext fonts-ipafont-gothic fonts-wqy-microhei fonts-lohit-deva)
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
