#!/usr/bin/env bash
# The binary store's size per task, on two sets of Taskwarrior-format tasks:
#
#   bash Benchmarks/store-size.sh [TASKS...]      (default: 10000 100000)
#
# "benchmark": the tasks of Benchmarks/taskwarrior.sh (all created at one instant, all
# pending). "spread": the same tasks created evenly over three years, a third of them
# completed with an end date, with random UUIDs. Each is imported by taskctl (debug build,
# which writes the same bytes as a release one), compacted, and its size printed with
# bytes per task. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(10000 100000)
swift build --product taskctl >/dev/null
TASKCTL="$PWD/.build/debug/taskctl"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 TZ=UTC TASKCTL_NOW=2026-11-22T12:00:00Z

for n in "${SIZES[@]}"; do
  for kind in benchmark spread; do
    python3 - "$n" "$kind" > "$WORK/tasks.json" <<'PY'
import json, sys, uuid, datetime, random
n, kind = int(sys.argv[1]), sys.argv[2]
base = datetime.datetime(2026, 11, 22, tzinfo=datetime.timezone.utc)
span = 3 * 365 * 86400
random.seed(n)
tasks = []
for i in range(n):
    if kind == "benchmark":
        t = {"description": f"Task number {i} with some words", "entry": "20261101T000000Z", "status": "pending",
             "uuid": str(uuid.UUID(int=i + 1)), "project": f"project{i % 20}"}
        if i % 4: t["priority"] = "LMH"[i % 3]
        if i % 7: t["due"] = (base + datetime.timedelta(days=i % 90 - 10)).strftime("%Y%m%dT%H%M%SZ")
    else:
        created = base - datetime.timedelta(seconds=span - i * span // n)
        t = {"description": f"Task number {i} with some words", "entry": created.strftime("%Y%m%dT%H%M%SZ"), "status": "pending",
             "uuid": str(uuid.UUID(int=random.getrandbits(128), version=4)), "project": f"project{i % 20}"}
        if i % 4: t["priority"] = "LMH"[i % 3]
        if i % 7: t["due"] = (created + datetime.timedelta(days=i % 90 + 1)).strftime("%Y%m%dT%H%M%SZ")
        if i % 3 == 0:
            t["status"] = "completed"
            t["end"] = (created + datetime.timedelta(days=i % 30, seconds=i % 86400)).strftime("%Y%m%dT%H%M%SZ")
    tasks.append(t)
print(json.dumps(tasks))
PY
    rm -f "$WORK/tasks.store"*
    TASKCTL_STORE="$WORK/tasks.store" "$TASKCTL" import "$WORK/tasks.json" >/dev/null
    TASKCTL_STORE="$WORK/tasks.store" "$TASKCTL" store compact >/dev/null
    bytes=$(wc -c < "$WORK/tasks.store")
    awk -v n="$n" -v k="$kind" -v b="$bytes" 'BEGIN { printf "%-9s %7d tasks: %10d bytes, %6.2f bytes a task\n", k, n, b, b / n }'
  done
done
