#!/usr/bin/env bash
# CI on a busy machine: clones this repository (its committed HEAD) into a fresh temp folder
# N times (default 5) and runs `bash .ci/run` there with CI=true, one clone after another,
# while a CPU-bound process keeps every core busy beside it (stress-ng --cpu <cores>, installed
# with apt-get when missing and possible, else one `yes >/dev/null` per core).
#
#   scripts/ci-stress.sh [N]
#
# Prints `ci-stress: K passed, M failed` and exits 1 if any run failed. Each run's log is kept
# in the temp folder; a failed run's path is printed (its clone is kept too).
set -uo pipefail

runs="${1:-5}"
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [number of runs, default 5]" >&2
  exit 2
fi

repo="$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)"
commit="$(git -C "$repo" rev-parse HEAD)"
work="$(mktemp -d "${TMPDIR:-/tmp}/ci-stress.XXXXXX")"
cores="$(nproc 2>/dev/null || echo 2)"
hog_pids=()

stop_hog() {
  for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hog_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  hog_pids=()
}
trap stop_hog EXIT
trap 'stop_hog; exit 130' INT TERM

if ! command -v stress-ng >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ci-stress: installing stress-ng"
  (apt-get install -y -qq stress-ng || (apt-get update -qq && apt-get install -y -qq stress-ng)) >/dev/null 2>&1 || true
fi
if command -v stress-ng >/dev/null 2>&1; then
  stress-ng --cpu "$cores" --quiet &
  hog_pids+=("$!")
  hog="stress-ng --cpu $cores"
else
  for _ in $(seq 1 "$cores"); do
    yes >/dev/null &
    hog_pids+=("$!")
  done
  hog="$cores x yes >/dev/null"
fi
echo "ci-stress: $runs run(s) of .ci/run from fresh clones of $repo (${commit:0:12}) beside $hog; logs in $work"

passed=0
failed=0
for i in $(seq 1 "$runs"); do
  dir="$work/run-$i"
  log="$work/run-$i.log"
  started=$SECONDS
  if git clone --quiet --no-checkout "$repo" "$dir" >"$log" 2>&1 &&
    git -C "$dir" checkout --quiet "$commit" >>"$log" 2>&1 &&
    (cd "$dir" && CI=true bash .ci/run) >>"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ci-stress: run $i passed in $((SECONDS - started)) s"
    rm -rf "$dir"
  else
    failed=$((failed + 1))
    echo "ci-stress: run $i FAILED after $((SECONDS - started)) s: log $log, clone $dir"
    grep -E '^FAIL |^  ● |^Tests: |^reliability: | FAIL$|^ci: ' "$log" | grep -v '● Console' | awk '!seen[$0]++' | head -20 | sed 's/^/    /'
  fi
done

stop_hog
echo "ci-stress: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
