#!/usr/bin/env bash
# taskctl and Taskwarrior 2.6, side by side, as whole processes on the same 10,000 tasks.
#
#   bash Benchmarks/taskwarrior.sh [TASKS] [RUNS]
#
# Installs Taskwarrior from Debian when it is absent, builds taskctl (release), loads the
# same tasks into both (Taskwarrior's own import; taskctl import of that export), then
# times list, a filtered list, add and done, several runs each, and prints medians and
# ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
RUNS=${2:-7}

if ! command -v task >/dev/null 2>&1; then
  echo "installing Taskwarrior from Debian..." >&2
  apt-get update -qq >/dev/null && apt-get install -y -qq taskwarrior >/dev/null
fi
swift build -c release --static-swift-stdlib -Xlinker -no-pie --product taskctl >/dev/null
TASKCTL="$PWD/.build/release/taskctl"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export TASKRC="$WORK/taskrc" TASKDATA="$WORK/task"
mkdir -p "$TASKDATA"
printf 'data.location=%s\nconfirmation=off\nverbose=nothing\ngc=on\nrecurrence=off\n' "$TASKDATA" > "$TASKRC"
export TASKCTL_STORE="$WORK/tasks.store" NO_COLOR=1 TZ=UTC

# The same tasks for both: Taskwarrior export format, made here.
python3 - "$N" > "$WORK/tasks.json" <<'PY'
import json, sys, uuid, datetime
n = int(sys.argv[1])
base = datetime.datetime(2026, 11, 22, tzinfo=datetime.timezone.utc)
tasks = []
for i in range(n):
    t = {"description": f"Task number {i} with some words", "entry": "20261101T000000Z", "status": "pending",
         "uuid": str(uuid.UUID(int=i + 1)), "project": f"project{i % 20}"}
    if i % 4: t["priority"] = "LMH"[i % 3]
    if i % 7: t["due"] = (base + datetime.timedelta(days=i % 90 - 10)).strftime("%Y%m%dT%H%M%SZ")
    tasks.append(t)
print(json.dumps(tasks))
PY
task import "$WORK/tasks.json" >/dev/null 2>&1
"$TASKCTL" import "$WORK/tasks.json" >/dev/null

# median of RUNS timings (ms) of a command; {i} in its words becomes the run's number, so
# a run can act on a task no earlier run touched (each 'done' marks a pending task)
time_ms() {
  local samples=()
  for k in $(seq "$RUNS"); do
    local start end
    local words=("${@//\{i\}/$k}")
    start=$(date +%s%N)
    "${words[@]}" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    samples+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${samples[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)] " " a[1] " " a[NR]}'
}

row() {
  local name=$1; shift
  local tw tc
  tw=$(time_ms "${TW_CMD[@]}")
  tc=$(time_ms "${TC_CMD[@]}")
  read -r twm twmin twmax <<<"$tw"
  read -r tcm tcmin tcmax <<<"$tc"
  local ratio
  ratio=$(awk -v a="$tcm" -v b="$twm" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  printf '| %s | %s ms (%s-%s) | %s ms (%s-%s) | %s |\n' "$name" "$tcm" "$tcmin" "$tcmax" "$twm" "$twmin" "$twmax" "$ratio"
}

echo "| $N tasks, $RUNS runs | taskctl median (min-max) | Taskwarrior 2.6 median (min-max) | taskctl / Taskwarrior |"
echo "| --- | --- | --- | --- |"
TW_CMD=(task rc.color=off list); TC_CMD=("$TASKCTL" list); row "list"
TW_CMD=(task rc.color=off project:project3 priority:H list); TC_CMD=("$TASKCTL" list --project project3 --priority high); row "filtered list"
TW_CMD=(task add "A new task" due:tomorrow); TC_CMD=("$TASKCTL" add "A new task" --due tomorrow); row "add"
TW_CMD=(task '{i}' done); TC_CMD=("$TASKCTL" done '{i}'); row "done"
echo
echo "taskctl store: $(stat -c %s "$TASKCTL_STORE") bytes; Taskwarrior data: $(du -sb "$TASKDATA" | cut -f1) bytes"
