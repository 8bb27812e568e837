#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the report's real-browser test.
# Without root or apt the test skips and says why; nothing else needs a browser.
set -uo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "chromium: present"
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium: installing from Debian's packages"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 \
    || echo "chromium: could not install; the real-browser report test will skip"
else
  echo "chromium: missing and not installable here (need root + apt); the real-browser test will skip"
fi
exit 0
