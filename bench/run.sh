#!/usr/bin/env bash
# Runs every codemode-mcp benchmark in one go and prints benchstat tables and
# the ratio table of issue 4 (BENCHMARKS.md explains the numbers).
#
#   bench/run.sh                 # 5 samples of everything (about 5 minutes)
#   COUNT=1 E2E_BENCHTIME=1s UNIT_BENCHTIME=200ms bench/run.sh   # a quick look
#   E2E_BENCH='DownstreamCall|SideEffectCall' UNIT_BENCH=LoggedCall bench/run.sh   # some of them
#
# The end-to-end benchmarks (./bench) run as COUNT rounds, each with fresh
# servers; the component benchmarks with -count COUNT. Raw output goes to
# $OUT (default bench/out, git-ignored): machine.txt (with the load average
# before each round), e2e.txt, units.txt. To profile the codemode-mcp server
# process during the end-to-end benchmarks, add SERVER_CPUPROFILE=DIR
# (profiles land in DIR/cpu-PID.pprof; sandbox workers are not profiled).
# Needs the module proxy once, for benchstat.
set -uo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-5}
E2E_BENCHTIME=${E2E_BENCHTIME:-2s}
UNIT_BENCHTIME=${UNIT_BENCHTIME:-1s}
E2E_BENCH=${E2E_BENCH:-.}    # -test.bench of the end-to-end benchmarks
UNIT_BENCH=${UNIT_BENCH:-.}  # -bench of the component benchmarks
OUT=${OUT:-bench/out}
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da # golang.org/x/perf, 2026-09-08
mkdir -p "$OUT"

benchstat() { go run "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION" "$@"; }

# The OpenAPI start-up benchmark reads GitHub's document from the
# end-to-end suite's npm packages.
[ -d e2e/node_modules/@octokit/openapi ] || (cd e2e && npm ci --no-audit --no-fund --loglevel=error)

{
  echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "go:     $(go version)"
  echo "cpu:    $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), nproc $(nproc)"
  echo "load:   $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min, before the run)"
} | tee "$OUT/machine.txt"

status=0
profile_args=()
if [ -n "${SERVER_CPUPROFILE:-}" ]; then
  mkdir -p "$SERVER_CPUPROFILE"
  profile_args=(-server.cpuprofile "$(cd "$SERVER_CPUPROFILE" && pwd)")
fi

echo
echo "== end to end: $COUNT rounds of bench.test -test.bench '$E2E_BENCH' -test.benchtime $E2E_BENCHTIME (go test -c ./bench)"
# Rounds rather than -count: each round starts fresh servers and measures
# direct, connector and codemode back to back, so a noisy neighbour on this
# machine hits both sides of a ratio alike.
go test -c -o "$OUT/bench.test" ./bench || exit 1
out_abs=$(cd "$OUT" && pwd)
: > "$OUT/e2e.txt"
for round in $(seq "$COUNT"); do
  echo "round $round: load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine.txt"
  (cd bench && "$out_abs/bench.test" -test.run '^$' -test.bench "$E2E_BENCH" -test.benchtime "$E2E_BENCHTIME" \
    -test.count 1 -test.timeout 60m "${profile_args[@]}") | tee -a "$OUT/e2e.txt" || status=1
done
rm -f "$OUT/bench.test"

echo
echo "== components: go test -run '^\$' -bench '$UNIT_BENCH' -benchtime $UNIT_BENCHTIME -count $COUNT ./server ./sandbox/pass ./sandbox/worker ./runtime ./store/sqlite ./connectors/openapi"
go test -run '^$' -bench "$UNIT_BENCH" -benchtime "$UNIT_BENCHTIME" -count "$COUNT" -timeout 60m \
  ./server ./sandbox/pass ./sandbox/worker ./runtime ./store/sqlite ./connectors/openapi | tee "$OUT/units.txt" || status=1

echo
echo "== benchstat: end to end, codemode against direct"
benchstat -col /via "$OUT/e2e.txt" || status=1
echo
echo "== benchstat: components"
benchstat "$OUT/units.txt" || status=1

echo
echo "== ratios (medians of $COUNT samples, measured in the same run)"
awk '
  function median(key,   n, i, j, t, v) {
    n = split(samples[key], v, " ")
    for (i = 2; i <= n; i++) { t = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  /^Benchmark.*\/via=/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    via = name; sub(/.*\/via=/, "", via)
    group = name; sub(/\/via=[^\/]*$/, "", group)
    for (i = 3; i < NF; i++) if ($(i + 1) == "ns/op") samples[group "|" via] = samples[group "|" via] " " $i
    if (!(group in seen)) { seen[group] = 1; order[++ngroups] = group }
  }
  /^--- FAIL: Benchmark[^ ]*\/isolation=[^\/ ]*$/ {
    group = $3; if (!(group in seen)) { seen[group] = 1; order[++ngroups] = group }
  }
  END {
    target["BenchmarkDownstreamCall"] = "<= 1.25x (aim 1.1x)"
    target["BenchmarkTrivialRunE2E"] = "<= 5x (aim 3x)"
    target["BenchmarkSideEffectCall"] = "<= 1.3x (issue 11)"
    target["BenchmarkOpenAPIGet"] = "adds <= 100us (issue 10)"
    printf "%-46s %12s %12s %8s  %s\n", "benchmark", "direct", "codemode", "ratio", "target"
    for (g = 1; g <= ngroups; g++) {
      grp = order[g]; bench = grp; sub(/\/.*/, "", bench)
      if (!((grp "|direct") in samples) || !((grp "|codemode") in samples)) {
        printf "%-46s %s\n", grp, "(not measured: see the failure above)"; continue
      }
      d = median(grp "|direct"); c = median(grp "|codemode")
      printf "%-46s %10.1fus %10.1fus %7.2fx  %s\n", grp, d / 1000, c / 1000, c / d, target[bench]
      if (bench == "BenchmarkOpenAPIGet") added[grp] = sprintf("added (%s): a GET through an OpenAPI method costs %.1fus more than made directly", grp, (c - d) / 1000)
      if ((grp "|wire") in samples) {
        w = median(grp "|wire")
        wire[grp] = sprintf("floor (%s): a bare client (one goroutine, no decoding) %.1fus (%.2fx direct); codemode is %.2fx that floor", grp, w / 1000, w / d, c / w)
      }
      if ((grp "|connector") in samples) {
        k = median(grp "|connector")
        connector[grp] = sprintf("breakdown (%s): connector alone %.1fus (%.2fx direct); runtime + sandbox + log + server add %.1fus per call", grp, k / 1000, k / d, (c - k) / 1000)
      }
      if (bench == "BenchmarkTrivialRunE2E") overhead[grp] = c
    }
    for (grp in added) print added[grp]
    for (grp in connector) print connector[grp]
    for (grp in wire) print wire[grp]
    for (grp in overhead)
      printf "run overhead amortised over 1000 calls (%s): %.2fus per call\n", grp, overhead[grp] / 1000 / 1000
  }
' "$OUT/e2e.txt"
exit $status
