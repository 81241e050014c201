#!/usr/bin/env bash
# taskctl sync beside the Rust TaskChampion replica (taskchampion-py 2.0.2: Taskwarrior 3's
# own sync code) on the same tasks and the same changes, through one local sync server
# (Tests/Support/sync_server.py).
#
#   bash Benchmarks/sync.sh [TASKS] [RUNS]      (default 10000 5)
#
# Per run, each replica on a client ID of its own: the first sync of TASKS tasks (everything
# sent), an incremental sync after 100 edited tasks, and a new replica's first sync that
# receives all of them. taskctl's times are whole processes (start, store, sync); the Rust
# replica's are its sync call alone, inside Python. The Rust replica derives the key from
# the secret (PBKDF2, 600,000 rounds) at every sync; taskctl derives it once and keeps it,
# so its derivation is timed apart ("key"): a sync of an empty store without the cached key.
# The table gives medians in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
# Builds quietly; on a failure prints the build's output. (A static executable's link warns
# about glibc functions that need its shared files at run time: not news on every run.)
build() {
  local log
  log=$(mktemp)
  if ! swift build "$@" >"$log" 2>&1; then cat "$log" >&2; rm -f "$log"; exit 1; fi
  rm -f "$log"
}
N=${1:-10000}
RUNS=${2:-5}

# taskctl-http links libcurl, whose development files a static build needs.
if ! dpkg -s libcurl4-openssl-dev >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq libcurl4-openssl-dev >/dev/null
fi
swift build -c release --static-swift-stdlib --product taskctl-http >/dev/null
build -c release -Xswiftc -static-executable --product taskctl \
  -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
TASKCTL="$PWD/.build/release/taskctl"
WORK=$(mktemp -d)
SERVER=
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
export NO_COLOR=1 TZ=UTC TASKCTL_NOW=2026-11-22T12:00:00Z

# The Rust replica: a Python 3.9 virtual environment with taskchampion-py (its only wheel is for 3.9).
VENV=${TMPDIR:-/tmp}/objectstore-taskchampion-py-2.0.2
if ! "$VENV/bin/python" -c "import taskchampion" 2>/dev/null; then
  PY39=$(command -v python3.9 || ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9*/bin/python3 2>/dev/null | head -1)
  [ -n "$PY39" ] || { echo "needs a Python 3.9 for taskchampion-py" >&2; exit 1; }
  rm -rf "$VENV" && "$PY39" -m venv "$VENV" && "$VENV/bin/pip" install --quiet taskchampion-py==2.0.2
fi

python3 Tests/Support/sync_server.py "$WORK/port" >/dev/null 2>&1 &
SERVER=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
URL="http://127.0.0.1:$(cat "$WORK/port")/"
SECRET="a benchmark secret"

# The tasks, in Taskwarrior's export format (for taskctl's import) and as task maps (for the Rust replica).
python3 - "$N" "$WORK" <<'PY'
import json, sys, uuid
n, work = int(sys.argv[1]), sys.argv[2]
export, maps = [], {}
for i in range(n):
    u = str(uuid.UUID(int=i + 1))
    export.append({"uuid": u, "description": f"Task number {i} with some words", "status": "pending", "entry": "20261101T000000Z",
                   "project": f"project{i % 20}", "tags": [f"tag{i % 7}"], "priority": "LMH"[i % 3], "due": "20261201T000000Z"})
    maps[u] = {"description": f"Task number {i} with some words", "status": "pending", "entry": "1793491200",
               "project": f"project{i % 20}", f"tag_tag{i % 7}": "", "priority": "LMH"[i % 3], "due": "1796083200"}
json.dump(export, open(f"{work}/tasks.json", "w"))
json.dump(maps, open(f"{work}/maps.json", "w"))
PY

# taskctl in a home of its own (its config names the server and the client).
taskctl_home() {
  local home=$1 client=$2
  mkdir -p "$home/.config/taskctl"
  printf 'sync.server.url = %s\nsync.server.client_id = %s\nsync.encryption_secret = %s\n' "$URL" "$client" "$SECRET" > "$home/.config/taskctl/config"
}
# Seconds a taskctl command takes, to the millisecond.
timed() {
  local home=$1; shift
  local start end
  start=$(date +%s%N)
  HOME="$home" XDG_CACHE_HOME="$home/.cache" TASKCTL_STORE="$home/tasks.store" "$TASKCTL" "$@" >/dev/null 2>"$WORK/err" || {
    echo "taskctl $* failed:" >&2; cat "$WORK/err" >&2; exit 1; }
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.3f\n", ns / 1e9 }'
}

RUST='
import json, sys, time, taskchampion as tc
run, work, url, client, secret = sys.argv[1:6]
maps = json.load(open(f"{work}/maps.json"))
def replica(name): return tc.Replica.new_on_disk(f"{work}/{name}", True, tc.AccessMode.ReadWrite)
def sync(r):
    start = time.perf_counter(); r.sync_to_remote(url, client, secret, False); return time.perf_counter() - start
r = replica(f"rust-a{run}"); ops = tc.Operations()
for u, keys in maps.items():
    t = r.create_task(u, ops)
    for k, v in keys.items(): t.set_value(k, v, ops)
r.commit_operations(ops)
first = sync(r)
ops = tc.Operations()
for u in list(maps)[:100]: r.get_task(u).set_value("priority", "H", ops)
r.commit_operations(ops)
incremental = sync(r)
receive = sync(replica(f"rust-b{run}"))
print(f"{first:.3f} {incremental:.3f} {receive:.3f}")'

for run in $(seq "$RUNS"); do
  client=$(python3 -c 'import uuid; print(uuid.uuid4())')
  a="$WORK/a$run" b="$WORK/b$run" scratch="$WORK/s$run"
  for home in "$a" "$b" "$scratch"; do taskctl_home "$home" "$client"; done
  key=$(timed "$scratch" sync)
  cp -r "$scratch/.cache" "$a/.cache"; cp -r "$scratch/.cache" "$b/.cache"
  HOME="$a" TASKCTL_STORE="$a/tasks.store" "$TASKCTL" import "$WORK/tasks.json" >/dev/null
  first=$(timed "$a" sync)
  HOME="$a" TASKCTL_STORE="$a/tasks.store" "$TASKCTL" edit $(seq 1 100) --priority high --yes >/dev/null
  incremental=$(timed "$a" sync)
  receive=$(timed "$b" sync)
  rust=$("$VENV/bin/python" -c "$RUST" "$run" "$WORK" "$URL" "$(python3 -c 'import uuid; print(uuid.uuid4())')" "$SECRET")
  echo "$key $first $incremental $receive $rust" >> "$WORK/times"
  echo "run $run: key $key, taskctl $first / $incremental / $receive, Rust replica $rust" >&2
done

python3 - "$WORK/times" "$N" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
med = [statistics.median(column) for column in zip(*rows)]
key, first, incremental, receive, rfirst, rincremental, rreceive = med
print(f"| sync ({int(sys.argv[2]):,} tasks, medians of {len(rows)}) | taskctl | Rust replica | ratio |")
print("| --- | ---: | ---: | ---: |")
for name, ours, theirs in [("first sync, every task sent", first, rfirst), ("100 tasks edited, then sync", incremental, rincremental),
                           ("a new replica receives every task", receive, rreceive)]:
    print(f"| {name} | {ours:.3f} s | {theirs:.3f} s | {ours / theirs:.2f}x |")
print(f"| taskctl's key derivation, once per secret (an empty store's first sync) | {key:.3f} s | | |")
PY
