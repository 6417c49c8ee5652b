#!/usr/bin/env bash
# A throwaway single-node Ceph cluster (one ceph-mon, one ceph-osd, radosgw) serving S3 on
# 127.0.0.1, for the object-store tests and benchmarks. No systemd, no /etc/ceph, no cephx.
# Needs Debian's ceph-mon, ceph-osd and radosgw (`node scripts/setup.mjs s3`).
#   S3_PORT, MON_PORT   required: free ports (the caller picks them, so clusters can run side by side)
#   CEPH_DIR            an empty folder with a short path (admin sockets live in it)
#   OSD_BACKEND         memstore (default: RAM) or bluestore (a sparse 10 GB file, for big data)
#   MEMSTORE_BYTES      memstore's size (default 4 GiB; the benchmarks' 1 GB objects want more)
# Prints S3_ENDPOINT=..., S3_ACCESS_KEY=..., S3_SECRET_KEY=... lines. Stop with rgw-stop.sh CEPH_DIR.
set -euo pipefail
: "${S3_PORT:?}" "${MON_PORT:?}" "${CEPH_DIR:?}"
ACCESS=${S3_ACCESS_KEY:-spillwaytestkey}
SECRET=${S3_SECRET_KEY:-spillwaytestsecret}
READY_TIMEOUT=${READY_TIMEOUT:-120}
mkdir -p "$CEPH_DIR"/{run,log,mon.a,osd.0,rgw}
CONF=$CEPH_DIR/ceph.conf
[ ! -e "$CONF" ] || { echo "error: $CEPH_DIR already holds a cluster" >&2; exit 1; }
FSID=$(cat /proc/sys/kernel/random/uuid)
if [ "${OSD_BACKEND:-memstore}" = bluestore ]; then
  # The block file must lie outside the OSD's data folder (a symlink loop otherwise).
  store="osd objectstore = bluestore
bluestore block path = $CEPH_DIR/osd.0.block
bluestore block create = true
bluestore block size = 10737418240
bluestore fsck on mount = false
bluestore block db create = false
bluestore block wal create = false"
else
  store="osd objectstore = memstore
memstore device bytes = ${MEMSTORE_BYTES:-4294967296}"
fi
# `ms mon client mode = crc secure`: radosgw asks for secure mode itself, which auth none cannot give.
# `paxos propose interval = 0.05`: each pool creation waits for Paxos (about 1 s each by default).
cat > "$CONF" <<CONF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
ms bind msgr1 = false
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc secure
run dir = $CEPH_DIR/run
admin socket = $CEPH_DIR/run/\$name.asok
pid file = $CEPH_DIR/run/\$name.pid
log file = $CEPH_DIR/log/\$name.log
crash dir = $CEPH_DIR/crash
keyring = $CEPH_DIR/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
paxos propose interval = 0.05
mon data avail warn = 1
mon data avail crit = 0
osd memory target = 939524096
[mon.a]
mon data = $CEPH_DIR/mon.a
[osd.0]
osd data = $CEPH_DIR/osd.0
$store
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$S3_PORT
rgw data = $CEPH_DIR/rgw
rgw thread pool size = 64
CONF
: > "$CEPH_DIR/pids"
fail() {
  echo "error: $*" >&2
  for f in "$CEPH_DIR"/log/*; do echo "--- $f" >&2; tail -n 15 "$f" >&2; done
  "$(dirname "$0")/rgw-stop.sh" "$CEPH_DIR" >&2 || true
  exit 1
}
trap 'fail "command failed at line $LINENO"' ERR
daemon() { local name=$1; shift; "$@" > "$CEPH_DIR/log/$name.out" 2>&1 < /dev/null & echo "$! $name" >> "$CEPH_DIR/pids"; }
ceph_() { timeout 30 ceph -c "$CONF" "$@"; }
poll() { local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" > /dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }
osd_up() { ceph_ osd dump 2>/dev/null | grep -q '^osd.0 up'; }

monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$CEPH_DIR/monmap" > /dev/null
ceph-mon -c "$CONF" --mkfs -i a --monmap "$CEPH_DIR/monmap" > "$CEPH_DIR/log/mkfs-mon.out" 2>&1 || fail "ceph-mon --mkfs"
daemon mon ceph-mon -c "$CONF" -i a -f
poll 150 ceph_ --connect-timeout 2 mon stat || fail "ceph-mon did not come up"
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
[ "$(ceph_ osd new "$OSD_UUID")" = 0 ] || fail "unexpected osd id"
ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$OSD_UUID" > "$CEPH_DIR/log/mkfs-osd.out" 2>&1 || fail "ceph-osd --mkfs"
daemon osd ceph-osd -c "$CONF" -i 0 -f
poll 300 osd_up || fail "ceph-osd did not come up"
daemon rgw radosgw -c "$CONF" -n client.rgw -f
ENDPOINT=http://127.0.0.1:$S3_PORT
deadline=$(( $(date +%s) + READY_TIMEOUT ))
until curl -fsS -o /dev/null "$ENDPOINT/" 2>/dev/null; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "radosgw not answering on $ENDPOINT"
  kill -0 "$(awk '$2=="rgw"{print $1}' "$CEPH_DIR/pids")" 2>/dev/null || fail "radosgw exited"
  sleep 0.2
done
radosgw-admin -c "$CONF" -n client.rgw user create --uid=spillway --display-name=spillway \
  --access-key="$ACCESS" --secret-key="$SECRET" > "$CEPH_DIR/log/user.out" 2>&1 || fail "radosgw-admin user create"
echo "S3_ENDPOINT=$ENDPOINT"
echo "S3_ACCESS_KEY=$ACCESS"
echo "S3_SECRET_KEY=$SECRET"
