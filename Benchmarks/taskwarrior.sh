#!/usr/bin/env bash
# taskctl and Taskwarrior 2.6, side by side, as whole processes on the same 10,000 tasks.
#
#   bash Benchmarks/taskwarrior.sh [TASKS] [RUNS] [BASE]
#   TASKCTL_LINK=pie bash Benchmarks/taskwarrior.sh ...
#
# With BASE (a commit), taskctl as built at BASE runs beside this one in the same run (its
# own store of the same tasks), so a change is measured against what came before it.
# taskctl is built as README's install line builds it (a static executable); TASKCTL_LINK=pie
# builds it as README's position-independent alternative (the standard library inside, the C
# library shared) and TASKCTL_LINK=no-pie as that at a fixed address, each in a scratch
# directory of its own under TMPDIR (their compiler flags differ from the static build's).
# BASE is built with the same flags (a base before the flag was in README builds with it too).
#
# Installs Taskwarrior from Debian when it is absent, builds taskctl (release), loads the
# same tasks into both (Taskwarrior's own import; taskctl import of that export), then
# times list, a filtered list, add, show, done and count with hyperfine, several runs each, and prints
# medians and ratios.
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
RUNS=${2:-7}
BASE=${3:-}

if ! command -v task >/dev/null 2>&1 || ! command -v hyperfine >/dev/null 2>&1; then
  echo "installing Taskwarrior and hyperfine from Debian..." >&2
  apt-get update -qq >/dev/null && apt-get install -y -qq taskwarrior hyperfine >/dev/null
fi
# README's flag that has generic types' metadata reached through their accessors (not by
# mangled name); TASKCTL_ACCESSORS=mangled leaves it out, in a scratch directory of its own.
ACCESSORS=(-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors)
case "${TASKCTL_LINK:-static}" in
  static) LINK_FLAGS=(-Xswiftc -static-executable); SCRATCH=.build ;;
  no-pie) LINK_FLAGS=(--static-swift-stdlib -Xlinker -no-pie); SCRATCH="${TMPDIR:-/tmp}/taskctl-pie-build" ;;
  pie) LINK_FLAGS=(--static-swift-stdlib); SCRATCH="${TMPDIR:-/tmp}/taskctl-pie-build" ;;
  *) echo "TASKCTL_LINK is static (the default), no-pie or pie" >&2; exit 2 ;;
esac
if [ "${TASKCTL_ACCESSORS:-}" = mangled ]; then ACCESSORS=(); SCRATCH="${TMPDIR:-/tmp}/taskctl-mangled-${TASKCTL_LINK:-static}-build"; fi
LINK_FLAGS+=("${ACCESSORS[@]}")
build -c release "${LINK_FLAGS[@]}" --scratch-path "$SCRATCH" --product taskctl
TASKCTL="$(cd "$SCRATCH" && pwd)/release/taskctl"

WORK=$(mktemp -d)
trap 'git worktree remove --force "$WORK/base" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
BASE_TASKCTL=""
if [ -n "$BASE" ]; then
  git worktree add --detach "$WORK/base" "$BASE" >/dev/null 2>&1
  (cd "$WORK/base" && build -c release "${LINK_FLAGS[@]}" --product taskctl)
  BASE_TASKCTL="$WORK/base/.build/release/taskctl"
fi
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
if [ -n "$BASE_TASKCTL" ]; then TASKCTL_STORE="$WORK/base.store" "$BASE_TASKCTL" import "$WORK/tasks.json" >/dev/null; fi

# Each command timed by hyperfine (no shell, 2 warm-up runs, RUNS runs), every run on the
# stores as they are after the import and one list (restored before each run, untimed), so each 'done' marks
# the same pending task and each 'add' adds to the same store. Prints the median and the
# range in ms.
# One list each first: Taskwarrior's garbage collection (gc=on) renumbers after the import
# once, not in every timed run.
task rc.color=off list >/dev/null 2>&1
"$TASKCTL" list >/dev/null
cp -a "$TASKCTL_STORE" "$WORK/tasks.store.copy"
if [ -n "$BASE_TASKCTL" ]; then TASKCTL_STORE="$WORK/base.store" "$BASE_TASKCTL" list >/dev/null; cp -a "$WORK/base.store" "$WORK/base.store.copy"; fi
cp -a "$TASKDATA" "$WORK/task.copy"
time_ms() {
  local prepare=$1; shift
  hyperfine -N --style none --warmup 2 --runs "$RUNS" --prepare "$prepare" --export-json "$WORK/run.json" -- "$*" >/dev/null 2>&1
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; print("%.1f %.1f %.1f" % (r["median"] * 1000, r["min"] * 1000, r["max"] * 1000))' "$WORK/run.json"
}

# Each command in turn: Taskwarrior, taskctl, and (with BASE) taskctl at BASE, interleaved
# by row so a busy moment of the machine touches all three alike. BASE_CMD "-": the
# command does not exist at BASE.
row() {
  local name=$1 tw tc ratio base="" vs=""
  tw=$(time_ms "cp -a $WORK/task.copy/. $TASKDATA/" "$TW_CMD")
  tc=$(time_ms "cp $WORK/tasks.store.copy $TASKCTL_STORE" "$TC_CMD")
  read -r twm twmin twmax <<<"$tw"
  read -r tcm tcmin tcmax <<<"$tc"
  ratio=$(awk -v a="$tcm" -v b="$twm" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  if [ -n "$BASE_TASKCTL" ]; then
    if [ "$BASE_CMD" = "-" ]; then
      base=" - |"; vs=" - |"
    else
      local b
      b=$(TASKCTL_STORE="$WORK/base.store" time_ms "cp $WORK/base.store.copy $WORK/base.store" "env TASKCTL_STORE=$WORK/base.store $BASE_CMD")
      read -r bm bmin bmax <<<"$b"
      base=" $bm ms ($bmin-$bmax) |"
      vs=" $(awk -v a="$tcm" -v b="$bm" 'BEGIN { printf "%.2f", a / b }') |"
    fi
  fi
  printf '| %s | %s ms (%s-%s) | %s ms (%s-%s) | %s |%s%s\n' "$name" "$tcm" "$tcmin" "$tcmax" "$twm" "$twmin" "$twmax" "$ratio" "$base" "$vs"
}

if [ -n "$BASE_TASKCTL" ]; then
  echo "| $N tasks, $RUNS runs | taskctl (${TASKCTL_LINK:-static}) median (min-max) | Taskwarrior 2.6 median (min-max) | taskctl / Taskwarrior | taskctl at $BASE | now / $BASE |"
  echo "| --- | --- | --- | --- | --- | --- |"
else
  echo "| $N tasks, $RUNS runs | taskctl (${TASKCTL_LINK:-static}) median (min-max) | Taskwarrior 2.6 median (min-max) | taskctl / Taskwarrior |"
  echo "| --- | --- | --- | --- |"
fi
TW_CMD="task rc.color=off list"; TC_CMD="$TASKCTL list"; BASE_CMD="$BASE_TASKCTL list"; row "list"
TW_CMD="task rc.color=off project:project3 priority:H list"; TC_CMD="$TASKCTL list --project project3 --priority high"
BASE_CMD="$BASE_TASKCTL list --project project3 --priority high"; row "filtered list"
TW_CMD="task add 'A new task' due:tomorrow"; TC_CMD="$TASKCTL add 'A new task' --due tomorrow"; BASE_CMD="$BASE_TASKCTL add 'A new task' --due tomorrow"; row "add"
TW_CMD="task rc.color=off 5 info"; TC_CMD="$TASKCTL show 5"; BASE_CMD="$BASE_TASKCTL show 5"; row "show"
TW_CMD="task 5 done"; TC_CMD="$TASKCTL done 5"; BASE_CMD="$BASE_TASKCTL done 5"; row "done"
TW_CMD="task rc.color=off count"; TC_CMD="$TASKCTL count"; BASE_CMD="$BASE_TASKCTL count"; row "count"
# The taskrc above turns recurrence off for both; with it on (both programs' default), every
# change also looks for recurring series whose instances fell due.
TW_CMD="task rc.recurrence=on add 'A new task' due:tomorrow"; TC_CMD="$TASKCTL rc.recurrence=on add 'A new task' --due tomorrow"
BASE_CMD="$BASE_TASKCTL rc.recurrence=on add 'A new task' --due tomorrow"; row "add, recurrence on"
# Taskwarrior's own filter language, the same words in both.
TW_CMD="task rc.color=off ( project:project3 or project:project4 ) priority:H list"
TC_CMD="$TASKCTL ( project:project3 or project:project4 ) priority:H list"; BASE_CMD="-"; row "filter with or and ( )"
TW_CMD="task rc.color=off +OVERDUE or due.before:eow list"; TC_CMD="$TASKCTL +OVERDUE or due.before:eow list"; BASE_CMD="-"; row "virtual tag or date filter"
echo
echo "taskctl store: $(stat -c %s "$TASKCTL_STORE") bytes; Taskwarrior data: $(du -sb "$TASKDATA" | cut -f1) bytes"
