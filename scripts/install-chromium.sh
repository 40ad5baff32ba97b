#!/bin/sh
# Installs Debian's Chromium for the end-to-end tests (test/e2e), when /usr/bin/chromium is
# missing. Needs root (or sudo). Non-interactive: `apt-get update`, then `apt-get install -y chromium`.
# Usage: sh scripts/install-chromium.sh
set -eu

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "chromium already installed: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
  exit 0
fi

sh "$(dirname "$0")/apt-install.sh" chromium fonts-liberation

if [ ! -x "$CHROMIUM" ]; then
  echo "install-chromium: apt-get finished but $CHROMIUM is missing" >&2
  exit 1
fi
echo "chromium installed: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
