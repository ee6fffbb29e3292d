#!/usr/bin/env bash
# Vendored from the workplace's shared/tools/docker-offline-base.sh so that docker/smoke.sh works on a
# clean clone (CI) where ../shared does not exist. Keep it in step with that file.
# Build a local stand-in for python:3.11-slim without any container registry:
# debootstrap a minimal Debian bookworm rootfs (Debian's python3.11), then
# `docker import` it. Needs root, a running docker engine, and Debian's mirror.
#
# Usage: docker-offline-base.sh [TAG]        (default TAG: evalgate-base:bookworm)
# Env:   FORCE=1     rebuild even if TAG already exists
#        MIRROR=...  Debian mirror (default: first URIs: in /etc/apt/sources.list.d/debian.sources)
#        WORKDIR=... scratch dir for the rootfs (default /tmp/evalgate-base-build; removed afterwards)
#        KEEP_ROOTFS=1  keep the rootfs directory after import
# Prints the image tag as its last line of stdout.
set -euo pipefail

TAG="${1:-evalgate-base:bookworm}"
SUITE=bookworm
WORKDIR="${WORKDIR:-/tmp/evalgate-base-build}"
ROOTFS="$WORKDIR/rootfs"

log() { echo "[offline-base] $*" >&2; }

if [[ "${FORCE:-0}" != 1 ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
  log "$TAG already exists (FORCE=1 to rebuild)"
  echo "$TAG"
  exit 0
fi

if [[ -z "${MIRROR:-}" ]]; then
  # The machine's own apt configuration names the Debian mirror it can reach.
  MIRROR=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [[ -n "$MIRROR" ]] || { log "no Debian mirror found in apt's sources; set MIRROR=..."; exit 1; }
fi
SEC_MIRROR="${SEC_MIRROR:-${MIRROR%/debian}/debian-security}"

if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
fi

rm -rf "$ROOTFS"
mkdir -p "$ROOTFS"
log "debootstrap $SUITE from $MIRROR"
debootstrap --variant=minbase \
  --include=python3,python3-venv,python3-pip,python-is-python3,ca-certificates \
  "$SUITE" "$ROOTFS" "$MIRROR" >"$WORKDIR/debootstrap.log" 2>&1 \
  || { tail -30 "$WORKDIR/debootstrap.log" >&2; exit 1; }

# This machine's egress goes through a TLS-inspecting proxy whose CA lives in
# the host's /usr/local/share/ca-certificates; without it pip in the image fails
# with CERTIFICATE_VERIFY_FAILED. Copy those CAs into the image's trust store.
EXTRA_CA_DIR="${EXTRA_CA_DIR:-/usr/local/share/ca-certificates}"
if compgen -G "$EXTRA_CA_DIR/*.crt" >/dev/null; then
  log "adding host CAs: $(cd "$EXTRA_CA_DIR" && echo *.crt)"
  mkdir -p "$ROOTFS/usr/local/share/ca-certificates"
  cp "$EXTRA_CA_DIR"/*.crt "$ROOTFS/usr/local/share/ca-certificates/"
  chroot "$ROOTFS" update-ca-certificates >/dev/null 2>&1
fi

# apt sources inside the image (same mirror, plus updates and security)
cat >"$ROOTFS/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SEC_MIRROR $SUITE-security main
EOF

# Keep images small the way the official Debian images do.
cat >"$ROOTFS/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
cat >"$ROOTFS/etc/apt/apt.conf.d/docker-no-recommends" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/docker-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF

# Trim what debootstrap already unpacked.
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/cache/apt/*.bin \
       "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/log/*.log "$ROOTFS"/var/log/apt/* \
       "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* "$ROOTFS"/usr/share/locale/* \
       "$ROOTFS"/debootstrap
find "$ROOTFS/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$ROOTFS/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
: >"$ROOTFS/etc/machine-id"
echo "$SUITE-offline" >"$ROOTFS/etc/hostname"

log "rootfs size: $(du -sh "$ROOTFS" | cut -f1)"
log "docker import -> $TAG"
tar --numeric-owner -C "$ROOTFS" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["python3"]' \
  --message "debootstrap --variant=minbase $SUITE + python3 (offline stand-in for python:3.11-slim)" \
  - "$TAG" >/dev/null

docker run --rm --network none "$TAG" python3 -c 'import sys, venv, ssl; print("python", sys.version.split()[0], sys.executable)' >&2

if [[ "${KEEP_ROOTFS:-0}" != 1 ]]; then rm -rf "$WORKDIR"; fi
docker image ls "$TAG" >&2
echo "$TAG"
