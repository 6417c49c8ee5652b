#!/usr/bin/env bash
# Debian packages the tests use: ripgrep (grep parity), chromium (e2e).
# Idempotent; skips apt entirely when everything is already there.
set -euo pipefail
need=()
command -v rg >/dev/null || need+=(ripgrep)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
