#!/usr/bin/env bash
# Make the servers the tests use available: redis-server and PostgreSQL from Debian's packages.
# The test fixtures start their own instances on free loopback ports; this only installs the
# binaries. Without root or apt the tests that need them skip, and say so.
set -uo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || need+=(postgresql)
if [ ${#need[@]} -eq 0 ]; then
  echo "services: redis-server and postgresql binaries present"
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "services: installing ${need[*]} from Debian's packages"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 \
    || echo "services: could not install ${need[*]}; the tests that need them will skip"
  # Debian starts the packaged services; the fixtures use their own instances, so stop those.
  service redis-server stop >/dev/null 2>&1 || true
  service postgresql stop >/dev/null 2>&1 || true
else
  echo "services: ${need[*]} missing and not installable here (need root + apt); those tests will skip"
fi
exit 0
