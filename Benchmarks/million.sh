#!/usr/bin/env bash
# taskctl with a million tasks: the whole-process commands of a user's large store, with
# their time and peak memory, and the single-task commands beside the same on 10,000 tasks.
#
#   bash Benchmarks/million.sh [TASKS] [RUNS]      (default 1000000 3)
#
# Builds taskctl (release, static standard library), makes TASKS tasks in Taskwarrior's
# export format (nine in ten pending; 20 projects, 4 tags each on a quarter of the tasks, most
# with a due date), and runs each command RUNS times: import into a new store, then on the
# imported store list (the pending rows), list --json, export, show, add (also with a tag and
# a project, and the bytes that one writes), done, edit, then a bulk edit of a quarter of the
# tasks, add after it and the bulk edit's undo. The table gives
# the median seconds and the median peak resident memory (GNU time's maximum RSS), and for
# the single-task commands the ratio to the same command on a 10,000-task store.
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
N=${1:-1000000}
RUNS=${2:-3}
SMALL=10000

build -c release -Xswiftc -static-executable --product taskctl \
  -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
TASKCTL="$PWD/.build/release/taskctl"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 TZ=UTC TASKCTL_NOW=2026-11-22T12:00:00Z HOME="$WORK"

make_tasks() {
  python3 - "$1" <<'PY'
import json, sys, uuid, datetime
n = int(sys.argv[1])
base = datetime.datetime(2026, 11, 22, tzinfo=datetime.timezone.utc)
out = sys.stdout
out.write("[")
for i in range(n):
    t = {"description": f"Task number {i} with some words", "entry": "20261101T000000Z",
         "status": "completed" if i % 10 == 9 else "pending", "uuid": str(uuid.UUID(int=i + 1)),
         "project": f"project{i % 20}", "tags": [f"tag{i % 4}"]}
    if t["status"] == "completed": t["end"] = "20261110T000000Z"
    if i % 4: t["priority"] = "LMH"[i % 3]
    if i % 7: t["due"] = (base + datetime.timedelta(days=i % 90 - 10)).strftime("%Y%m%dT%H%M%SZ")
    out.write(("," if i else "") + json.dumps(t))
out.write("]")
PY
}
make_tasks "$N" > "$WORK/large.json"
make_tasks "$SMALL" > "$WORK/small.json"

# One run of a command on a store: "seconds peak-MB" (the wall time of the process, to the
# millisecond; its maximum resident set from GNU time). {i} in the words becomes the run's
# number (each `done` and `edit` acts on a pending task no earlier run touched: ids 11, 21,
# ... and 12, 22, ...).
run_once() {
  local store=$1 k=$2; shift 2
  local words=("${@//\{i\}/$k}")
  local start end
  start=$(date +%s%N)
  TASKCTL_STORE="$store" /usr/bin/time -f "%M" -o "$WORK/time" "$TASKCTL" "${words[@]}" >/dev/null 2>"$WORK/err" || {
    echo "taskctl ${words[*]} failed:" >&2; cat "$WORK/err" >&2; exit 1; }
  end=$(date +%s%N)
  awk -v ns=$((end - start)) '{printf "%.3f %d\n", ns / 1e9, $1 / 1024}' "$WORK/time"
}

# Median seconds and median peak MB of the runs (lines "seconds MB").
median() {
  cat > "$WORK/runs"
  local seconds megabytes
  seconds=$(cut -d' ' -f1 "$WORK/runs" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  megabytes=$(cut -d' ' -f2 "$WORK/runs" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$seconds $megabytes"
}

measure() {
  local store=$1; shift
  for k in $(seq "$RUNS"); do run_once "$store" "$k" "$@" || exit 1; done > "$WORK/measured"
  median < "$WORK/measured"
}

# Import: each run into a new store; the last one stays for the other commands.
import_times() {
  local json=$1 store=$2
  for k in $(seq "$RUNS"); do rm -f "$store" "$store".*; run_once "$store" "$k" import "$json" || exit 1; done > "$WORK/measured"
  median < "$WORK/measured"
}

echo "| command | $N tasks: median s | peak MB | $SMALL tasks: median s | ratio |"
echo "| --- | ---: | ---: | ---: | ---: |"
out=$(import_times "$WORK/large.json" "$WORK/large.store") || exit 1; read -r ls lm <<<"$out"
out=$(import_times "$WORK/small.json" "$WORK/small.store") || exit 1; read -r ss sm <<<"$out"
echo "| import | $ls | $lm | $ss |  |"
for command in "list" "list --json" "export"; do
  # shellcheck disable=SC2086
  out=$(measure "$WORK/large.store" $command) || exit 1; read -r ls lm <<<"$out"
  # shellcheck disable=SC2086
  out=$(measure "$WORK/small.store" $command) || exit 1; read -r ss sm <<<"$out"
  echo "| $command | $ls | $lm | $ss |  |"
done
for command in "show 5" "add Another_task" "add Tagged_task --tag tag0 --project project0" "done {i}1" "edit {i}2 --priority low"; do
  # shellcheck disable=SC2086
  out=$(measure "$WORK/large.store" $command) || exit 1; read -r ls lm <<<"$out"
  # shellcheck disable=SC2086
  out=$(measure "$WORK/small.store" $command) || exit 1; read -r ss sm <<<"$out"
  ratio=$(awk -v a="$ls" -v b="$ss" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')
  echo "| $command | $ls | $lm | $ss | $ratio |"
  if [ "$command" = "add Another_task" ]; then added=$ls; fi
done

# What one add with a tag and a project writes: the store's growth (a quarter of the tasks
# share the tag, a twentieth the project).
for store in large small; do
  before=$(stat -c %s "$WORK/$store.store")
  TASKCTL_STORE="$WORK/$store.store" "$TASKCTL" add Tagged_task --tag tag0 --project project0 >/dev/null
  after=$(stat -c %s "$WORK/$store.store")
  echo "| bytes one tagged add writes ($store store) | $((after - before)) |  |  |  |"
done

# A bulk edit of a quarter of the tasks (five projects of twenty), kept in the store's
# history for undo; then `add` again (its ratio is to `add` before the edit), and the undo.
where="project.name IN {'project0', 'project1', 'project2', 'project3', 'project4'}"
out=$(run_once "$WORK/large.store" 1 edit --where "$where" --priority medium --yes) || exit 1; read -r es em <<<"$out"
echo "| edit --where (a quarter of the tasks) | $es | $em |  |  |"
out=$(measure "$WORK/large.store" add Another_task) || exit 1; read -r ls lm <<<"$out"
ratio=$(awk -v a="$ls" -v b="$added" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')
echo "| add, after that edit | $ls | $lm |  | $ratio of add before |"
# Undo the adds just made, then the bulk edit itself.
for k in $(seq "$RUNS"); do TASKCTL_STORE="$WORK/large.store" "$TASKCTL" undo >/dev/null; done
out=$(run_once "$WORK/large.store" 1 undo) || exit 1; read -r us um <<<"$out"
echo "| undo of that edit | $us | $um |  |  |"
