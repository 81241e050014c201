#!/usr/bin/env bash
# taskctl and Taskwarrior 2.6, side by side, as whole processes on the same 10,000 tasks.
#
#   bash Benchmarks/taskwarrior.sh [TASKS] [RUNS]
#
# Installs Taskwarrior from Debian when it is absent, builds taskctl (release), loads the
# same tasks into both (Taskwarrior's own import; taskctl import of that export), then
# times list, a filtered list, add, show and done with hyperfine, several runs each, and prints
# medians and ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
RUNS=${2:-7}

if ! command -v task >/dev/null 2>&1 || ! command -v hyperfine >/dev/null 2>&1; then
  echo "installing Taskwarrior and hyperfine from Debian..." >&2
  apt-get update -qq >/dev/null && apt-get install -y -qq taskwarrior hyperfine >/dev/null
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

# Each command timed by hyperfine (no shell, 2 warm-up runs, RUNS runs), every run on the
# stores as they are after the import and one list (restored before each run, untimed), so each 'done' marks
# the same pending task and each 'add' adds to the same store. Prints the median and the
# range in ms.
# One list each first: Taskwarrior's garbage collection (gc=on) renumbers after the import
# once, not in every timed run.
task rc.color=off list >/dev/null 2>&1
"$TASKCTL" list >/dev/null
cp -a "$TASKCTL_STORE" "$WORK/tasks.store.copy"
cp -a "$TASKDATA" "$WORK/task.copy"
time_ms() {
  local prepare=$1; shift
  hyperfine -N --style none --warmup 2 --runs "$RUNS" --prepare "$prepare" --export-json "$WORK/run.json" -- "$*" >/dev/null 2>&1
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; print("%.1f %.1f %.1f" % (r["median"] * 1000, r["min"] * 1000, r["max"] * 1000))' "$WORK/run.json"
}

row() {
  local name=$1 tw tc ratio
  tw=$(time_ms "cp -a $WORK/task.copy/. $TASKDATA/" "$TW_CMD")
  tc=$(time_ms "cp $WORK/tasks.store.copy $TASKCTL_STORE" "$TC_CMD")
  read -r twm twmin twmax <<<"$tw"
  read -r tcm tcmin tcmax <<<"$tc"
  ratio=$(awk -v a="$tcm" -v b="$twm" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  printf '| %s | %s ms (%s-%s) | %s ms (%s-%s) | %s |\n' "$name" "$tcm" "$tcmin" "$tcmax" "$twm" "$twmin" "$twmax" "$ratio"
}

echo "| $N tasks, $RUNS runs | taskctl median (min-max) | Taskwarrior 2.6 median (min-max) | taskctl / Taskwarrior |"
echo "| --- | --- | --- | --- |"
TW_CMD="task rc.color=off list"; TC_CMD="$TASKCTL list"; row "list"
TW_CMD="task rc.color=off project:project3 priority:H list"; TC_CMD="$TASKCTL list --project project3 --priority high"; row "filtered list"
TW_CMD="task add 'A new task' due:tomorrow"; TC_CMD="$TASKCTL add 'A new task' --due tomorrow"; row "add"
TW_CMD="task rc.color=off 5 info"; TC_CMD="$TASKCTL show 5"; row "show"
TW_CMD="task 5 done"; TC_CMD="$TASKCTL done 5"; row "done"
echo
echo "taskctl store: $(stat -c %s "$TASKCTL_STORE") bytes; Taskwarrior data: $(du -sb "$TASKDATA" | cut -f1) bytes"
