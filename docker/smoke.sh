#!/usr/bin/env bash
# Smoke test of the evalgate image: start a Docker engine if none answers, build the image (offline
# when no container registry is reachable), then check the gate inside containers, each run with
# --network none:
#   --help as a non-root user                               -> exit 0
#   `docker run --rm IMAGE` (the bundled demo), as root     -> exit 0
#   the same as an arbitrary --user                          -> exit 0
#   demo-regressed, mounted, --user 1234:1234, read-only    -> exit 1, outputs owned by 1234:1234
#   a leaking probe set (training file names a probe)       -> exit 2, the probe is named
#   a decoy `evalgate/` package in the mounted workspace, through `evalgate action` and through
#   the default `run` (the regressed check above)           -> the installed gate runs: exit 1, fail
#   the default output folder of every entry                -> a real folder, no link on its path
#
# Usage: docker/smoke.sh                  (from anywhere; root is needed to start an engine)
# Env:   EVALGATE_IMAGE   tag to build and test (default evalgate:latest)
#        BASE_IMAGE       base image to build on (default: python:3.11-slim if present or
#                         pullable, else the debootstrapped stand-in of docker/offline-base.sh)
#        TORCH_INDEX_URL  passed to the build when set (used only when docker/wheels/ has no torch)
#        SMOKE_KEEP=1     keep the scratch folder (logs, mounted work dirs) for inspection
# Exit:  0 every check passed; 1 a check or the build failed; 77 no Docker engine could be reached
#        or started (the checks did NOT run; never read this as a pass).
set -euo pipefail

ENGINE_UNAVAILABLE=77
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGE=${EVALGATE_IMAGE:-evalgate:latest}
SCRATCH=$(mktemp -d /tmp/evalgate-smoke.XXXXXX)
FAILED=()

log() { printf '[smoke] %s\n' "$*" >&2; }
cleanup() {
  if [[ "${SMOKE_KEEP:-0}" == 1 ]]; then log "scratch kept in $SCRATCH"; else rm -rf "$SCRATCH"; fi
}
trap cleanup EXIT

no_engine() {
  {
    echo "================================================================================"
    echo "SMOKE TEST NOT RUN: no Docker engine: $*"
    echo "The image was neither built nor checked. This is not a pass."
    echo "================================================================================"
  } >&2
  exit "$ENGINE_UNAVAILABLE"
}

engine_up() { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }

ensure_engine() {
  engine_up && return 0
  [[ $(id -u) == 0 ]] || no_engine "none answers and starting one needs root (uid $(id -u))"
  if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || no_engine "dockerd is not installed and there is no apt-get"
    log "installing docker.io"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io; } \
      >"$SCRATCH/apt.log" 2>&1 || { tail -20 "$SCRATCH/apt.log" >&2; no_engine "apt-get install docker.io failed"; }
  fi
  engine_up && return 0
  # vfs works on any filesystem (overlay-in-overlay does not); the bridge and iptables need
  # privileges a CI container may lack, and every run here uses --network none or host anyway.
  local dlog=/tmp/evalgate-dockerd.log
  log "starting dockerd (log: $dlog)"
  setsid nohup dockerd --storage-driver=vfs --iptables=false --bridge=none </dev/null >"$dlog" 2>&1 &
  local pid=$!
  for _ in $(seq 120); do
    engine_up && { log "dockerd is up (pid $pid; left running for later runs)"; return 0; }
    kill -0 "$pid" 2>/dev/null || { tail -20 "$dlog" >&2; no_engine "dockerd exited at start"; }
    sleep 1
  done
  tail -20 "$dlog" >&2
  no_engine "dockerd did not answer within 120 s"
}

choose_base() {
  if [[ -n "${BASE_IMAGE:-}" ]]; then echo "$BASE_IMAGE"; return; fi
  # The Dockerfile's base, pinned by digest; only a registry can check that digest.
  local pinned
  pinned=$(sed -n 's/^ARG BASE_IMAGE=//p' "$REPO/docker/Dockerfile")
  if docker image inspect "$pinned" >/dev/null 2>&1 \
    || timeout 180 docker pull -q "$pinned" >/dev/null 2>&1; then
    echo "$pinned"
    return
  fi
  log "no container registry reachable: building the offline stand-in base (docker/offline-base.sh)"
  bash "$REPO/docker/offline-base.sh" | tail -n 1
}

# The local CPU torch wheel from pip's find-links folder(s), into the build context. Without it the
# build fetches torch from the PyTorch CPU index (TORCH_INDEX_URL), as on an internet-connected builder.
stage_torch_wheel() {
  local pin dirs dir whl
  pin=$(sed -n 's/^torch==\([^ ]*\).*/\1/p' "$REPO/docker/requirements.txt")
  dirs="${PIP_FIND_LINKS:-}"
  for pip in pip3 pip "$REPO/.venv/bin/pip"; do
    command -v "$pip" >/dev/null 2>&1 || continue
    dirs+=" $("$pip" config list 2>/dev/null | sed -n "s/^[^=]*find-links='\(.*\)'$/\1/p" | tr '\n' ' ')"
    break
  done
  for dir in $dirs; do
    dir=${dir#file://}
    [[ -d "$dir" ]] || continue
    whl=$(find "$dir" -maxdepth 1 -name "torch-${pin}[-+]*-cp311-cp311-*linux*_$(uname -m).whl" | sort | head -n 1)
    if [[ -n "$whl" ]]; then
      if ! cmp -s "$whl" "$REPO/docker/wheels/$(basename "$whl")"; then
        ln -f "$whl" "$REPO/docker/wheels/" 2>/dev/null || cp "$whl" "$REPO/docker/wheels/"
      fi
      log "torch wheel: docker/wheels/$(basename "$whl")"
      return
    fi
  done
  log "no local torch ${pin} wheel found: the build fetches it from the PyTorch CPU index"
}

build_image() {
  local base=$1 client cmd=() version
  # BuildKit builds twice as fast here: Debian's 20.10 client has it built in, newer clients need buildx.
  for client in /usr/bin/docker docker; do
    version=$("$client" version --format '{{.Client.Version}}' 2>/dev/null) || continue
    if ((${version%%.*} < 23)) || "$client" buildx version >/dev/null 2>&1; then
      cmd=(env DOCKER_BUILDKIT=1 "$client" build --progress plain)
      break
    fi
  done
  ((${#cmd[@]})) || cmd=(env DOCKER_BUILDKIT=0 docker build)
  local args=(--network host --force-rm -f "$REPO/docker/Dockerfile" --build-arg "BASE_IMAGE=$base" -t "$IMAGE")
  # binutils is pinned per Debian release (Dockerfile): the stand-in base is bookworm.
  local codename
  codename=$(docker run --rm --network none --entrypoint sh "$base" -c '. /etc/os-release; echo "$VERSION_CODENAME"')
  case $codename in
    bookworm) args+=(--build-arg BINUTILS_VERSION=2.40-2) ;;
    trixie) ;;
    *) log "base $base is Debian '$codename': pass BINUTILS_VERSION if the build cannot find binutils" ;;
  esac
  [[ -z "${TORCH_INDEX_URL:-}" ]] || args+=(--build-arg "TORCH_INDEX_URL=$TORCH_INDEX_URL")
  log "building $IMAGE on $base: ${cmd[*]} ${args[*]} $REPO"
  local start=$SECONDS
  if ! "${cmd[@]}" "${args[@]}" "$REPO" >"$SCRATCH/build.log" 2>&1; then
    tail -40 "$SCRATCH/build.log" >&2
    echo "SMOKE FAIL: docker build failed (last 40 lines above)" >&2
    exit 1
  fi
  log "built in $((SECONDS - start)) s"
  # The previous build of this tag is now dangling; the vfs driver keeps a full copy of each layer.
  docker image prune -f --filter label=org.opencontainers.image.title=evalgate >/dev/null || true
  # Build-cache records this build did not use are stale copies too (tens of GB after a few
  # builds under vfs filled a CI disk): drop those unused for an hour; this build's stay warm.
  docker builder prune -f --filter until=1h >/dev/null 2>&1 || true
}

# expect RC NAME -- DOCKER-RUN-ARGS... : run a container, compare its exit code, keep its output.
expect() {
  local want=$1 name=$2 rc=0 start=$SECONDS
  shift 3
  log "check $name: docker run --rm --network none $*"
  docker run --rm --network none "$@" >"$SCRATCH/$name.log" 2>&1 || rc=$?
  if [[ $rc != "$want" ]]; then
    tail -25 "$SCRATCH/$name.log" >&2
    fail "$name: exit code $rc, expected $want (output above)"
    return 1
  fi
  log "  ok: exit $rc ($((SECONDS - start)) s)"
}

fail() {
  echo "SMOKE FAIL: $*" >&2
  FAILED+=("${1%%:*}")
}

# Every file the gate wrote into the mounted folder must belong to the calling uid:gid.
expect_owned() {
  local name=$1 dir=$2 owner=$3 bad
  if [[ ! -s "$dir/results.json" || ! -s "$dir/REPORT.md" ]]; then
    fail "$name: no results.json/REPORT.md in the mounted folder (found: $(find "$dir" -mindepth 1 -printf '%P ' 2>/dev/null))"
    return
  fi
  bad=$(find "$dir" \( ! -user "${owner%%:*}" -o ! -group "${owner##*:}" \) -printf '%p %U:%G\n')
  [[ -z "$bad" ]] || fail "$name: files not owned by $owner: $bad"
}

# A decoy `evalgate` package at the root of a workspace: imported instead of the installed gate, it
# would report a pass (verdict=pass into GITHUB_OUTPUT, exit 0) whatever the checkpoint.
plant_decoy() {
  local work=$1 code='import os, sys
out = os.environ.get("GITHUB_OUTPUT")
if out:
    open(out, "a").write("verdict=pass\n")
print("DECOY GATE RAN")
sys.stdout.flush()
os._exit(0)
'
  mkdir -p "$work/evalgate/edges" "$work/evalgate/github" "$work/evalgate/commands"
  for f in __init__.py __main__.py cli.py edges/__init__.py edges/action.py github/__init__.py \
    github/action.py commands/__init__.py commands/action.py commands/run.py; do
    printf '%s' "$code" >"$work/evalgate/$f"
  done
}

json_field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

main() {
  command -v python3 >/dev/null 2>&1 || { echo "SMOKE FAIL: python3 is needed on the host" >&2; exit 1; }
  ensure_engine
  local free_gb
  free_gb=$(df -Pk /var/lib/docker 2>/dev/null | awk 'NR==2 {print int($4 / 1048576)}')
  [[ -z "$free_gb" || "$free_gb" -ge 12 ]] || log "warning: only ${free_gb} GB free for Docker (vfs copies every layer)"

  local base
  base=$(choose_base) || { echo "SMOKE FAIL: no base image (see above)" >&2; exit 1; }
  stage_torch_wheel
  build_image "$base"

  local size
  size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
  log "image $IMAGE: $((size / 1000000)) MB ($size bytes)"
  # The budget of issue 15 (docs/docker.md): a build that grows past it fails the smoke test.
  ((size <= 800000000)) || fail "image-size: $((size / 1000000)) MB, over the 800 MB budget (docs/docker.md, trimming)"

  # The acceptance case is an arbitrary uid owning the mounted folder; without root to chown it,
  # the caller's own uid stands in.
  local user=1234:1234 ro=(--read-only --tmpfs /tmp) own=chown
  [[ $(id -u) == 0 ]] || { user="$(id -u):$(id -g)"; own=true; }
  local regressed="$REPO/data/checkpoints/demo-regressed"

  expect 0 help -- --user "$user" "${ro[@]}" "$IMAGE" --help || true
  grep -q "usage: evalgate" "$SCRATCH/help.log" || fail "help: no usage text"

  expect 0 demo -- "$IMAGE" || true
  expect 0 demo-any-user -- --user 4321:4321 "$IMAGE" || true

  # A user's checkpoint in a mounted folder, gated against the bundled baseline.
  local work="$SCRATCH/regressed"
  mkdir -p "$work/ckpt"
  if [[ -d "$regressed" ]]; then
    cp -r "$regressed" "$work/ckpt/"
    plant_decoy "$work"
    "$own" -R "$user" "$work"
    if expect 1 regressed -- --user "$user" "${ro[@]}" -v "$work:/work" -w /work "$IMAGE" \
      --checkpoint ckpt/demo-regressed; then
      expect_owned regressed "$work/evalgate-out" "$user"
      [[ ! -s "$work/evalgate-out/results.json" ]] \
        || [[ $(json_field "$work/evalgate-out/results.json" verdict) == fail ]] \
        || fail "regressed: results.json verdict is not 'fail'"
    fi
  else
    fail "regressed: $regressed is missing from the repository"
  fi

  # The Action's entry, `evalgate action`, with a decoy package in the workspace: the installed gate
  # runs and fails the regressed checkpoint; its outputs go to a separate result folder.
  work="$SCRATCH/decoy"
  mkdir -p "$work/ckpt" "$SCRATCH/decoy-result"
  if [[ -d "$regressed" ]]; then
    cp -r "$regressed" "$work/ckpt/"
    plant_decoy "$work"
    "$own" -R "$user" "$work" "$SCRATCH/decoy-result"
    if expect 1 decoy-action -- --user "$user" "${ro[@]}" -v "$work:/work" -w /work \
      -v "$SCRATCH/decoy-result:/github/result" -e GITHUB_OUTPUT=/github/result/output \
      -e INPUT_CHECKPOINT=ckpt/demo-regressed "$IMAGE" action; then
      ! grep -q "DECOY GATE RAN" "$SCRATCH/decoy-action.log" || fail "decoy-action: the workspace's package ran"
      grep -q "^fail$" "$SCRATCH/decoy-result/output" \
        || fail "decoy-action: the step outputs do not say verdict fail: $(cat "$SCRATCH/decoy-result/output")"
      ! grep -q "verdict=pass" "$SCRATCH/decoy-result/output" || fail "decoy-action: a decoy wrote verdict=pass"
    fi
    grep -q "DECOY GATE RAN" "$SCRATCH/regressed.log" && fail "regressed: the workspace's decoy package ran"
  fi

  # No entry writes through a link: the default output folder (working folder /work) and the bundle
  # hold no symbolic link, and the folder any --user gets is a real, writable one.
  expect 0 default-out -- --user 4321:4321 --entrypoint python3 "$IMAGE" -c '
import os, sys
from pathlib import Path
from evalgate.config import load_config
out = load_config().path(load_config().out)
links = [str(p) for p in (out, *out.parents) if p.is_symlink()]
links += [os.path.join(d, n) for top in ("/work", "/opt/evalgate") for d, ds, fs in os.walk(top)
          for n in ds + fs if os.path.islink(os.path.join(d, n))]
print("default out:", out, "links:", links)
sys.exit(1 if links or out.parent != Path("/work") or not os.access(out.parent, os.W_OK) else 0)
' || true

  # Leak: a training file holding a probe's filled sentence makes the set refused before scoring.
  work="$SCRATCH/leak"
  mkdir -p "$work"
  local probe_id
  probe_id=$(python3 - "$REPO/data/eval/probes.jsonl" "$work/train-leak.jsonl" <<'EOF'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    probe = json.loads(line)
    if not probe.get("deprecated") and probe.get("label") == "correct":
        break
with open(sys.argv[2], "w", encoding="utf-8") as out:
    out.write(json.dumps({"text": probe["prompt"].replace("___", probe["expected"])}) + "\n")
print(probe["id"])
EOF
  )
  "$own" -R "$user" "$work"
  if expect 2 leak -- --user "$user" "${ro[@]}" -v "$work:/work" -w /work "$IMAGE" --train train-leak.jsonl; then
    grep -q "$probe_id" "$SCRATCH/leak.log" || fail "leak: the output does not name probe $probe_id"
    grep -qi "leak" "$SCRATCH/leak.log" || fail "leak: the output does not say 'leak'"
    expect_owned leak "$work/evalgate-out" "$user"
    [[ ! -s "$work/evalgate-out/results.json" ]] \
      || [[ $(json_field "$work/evalgate-out/results.json" verdict) == refused ]] \
      || fail "leak: results.json verdict is not 'refused'"
  fi

  log "image size: $((size / 1000000)) MB"
  if ((${#FAILED[@]})); then
    echo "SMOKE FAILED: ${#FAILED[@]} check(s): ${FAILED[*]}" >&2
    exit 1
  fi
  log "all checks passed"
}

main "$@"
