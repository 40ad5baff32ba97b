#!/bin/sh
# Installs Debian packages non-interactively (apt-get update, then install --no-install-recommends),
# as root or through sudo. Shared by install-chromium.sh and install-postgres.sh.
# Usage: sh scripts/apt-install.sh PACKAGE...
set -eu

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "apt-install: must run as root (or with sudo available) to install $*" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "$@"
