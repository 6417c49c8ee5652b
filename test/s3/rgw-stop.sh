#!/usr/bin/env bash
# Stops the cluster rgw-start.sh made in CEPH_DIR and removes the folder. Signals only the pids it
# recorded whose command line still names this cluster's ceph.conf (a reused pid is never hit):
# TERM, then KILL after STOP_GRACE seconds (radosgw takes about 5 s to exit cleanly; not needed here).
set -u
DIR=$(cd "${1:?usage: rgw-stop.sh CEPH_DIR}" && pwd) || exit 1
ours() {
  [ -r "/proc/$1/cmdline" ] && awk '{exit ($3=="Z")}' "/proc/$1/stat" 2>/dev/null \
    && tr '\0' ' ' < "/proc/$1/cmdline" | grep -qF -- "$DIR/ceph.conf"
}
alive() { local out=""; for p in "$@"; do ours "$p" && out="$out $p"; done; echo "$out"; }
pids=$(alive $( [ -f "$DIR/pids" ] && tac "$DIR/pids" | awk '{print $1}'))
for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
for _ in $(seq 1 $(( ${STOP_GRACE:-2} * 10 ))); do pids=$(alive $pids); [ -z "$pids" ] && break; sleep 0.1; done
for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
for _ in $(seq 1 50); do pids=$(alive $pids); [ -z "$pids" ] && break; sleep 0.1; done
rm -rf "$DIR"
