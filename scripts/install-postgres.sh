#!/bin/sh
# Installs Debian's PostgreSQL server for the tests that build snapshots from PostgreSQL
# (test/ingest/postgres.test.ts starts its own server in a temporary directory), when no
# initdb is found. Needs root (or sudo). Non-interactive.
# Usage: sh scripts/install-postgres.sh
set -eu

if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
  echo "postgresql already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-postgres: must run as root (or with sudo available)" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends postgresql

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "install-postgres: apt-get finished but no initdb under /usr/lib/postgresql" >&2
  exit 1
fi
