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

sh "$(dirname "$0")/apt-install.sh" postgresql

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "install-postgres: apt-get finished but no initdb under /usr/lib/postgresql" >&2
  exit 1
fi
