#!/bin/sh
# Installs Debian's nginx and wrk for the fleet test (scripts/fleet-test.ts, run by
# test/fleet/fleet.test.ts and the benchmarks' HTTP scenarios), when either is missing. Needs
# root (or sudo). Non-interactive.
# Usage: sh scripts/install-fleet-tools.sh
set -eu

# Debian puts nginx in /usr/sbin, which a non-root PATH may lack.
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }

missing=""
have nginx || missing="$missing nginx"
have wrk || missing="$missing wrk"
if [ -z "$missing" ]; then
  echo "nginx and wrk already installed"
  exit 0
fi

# shellcheck disable=SC2086
sh "$(dirname "$0")/apt-install.sh" $missing

for tool in nginx wrk; do
  if ! have "$tool"; then
    echo "install-fleet-tools: apt-get finished but $tool is missing" >&2
    exit 1
  fi
done
echo "installed:$missing"
