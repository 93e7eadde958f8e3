#!/bin/sh
# status_cold.sh BIN [RUNS]: times `BIN status` as a whole process in a
# project whose .mcp.json has 32 servers {"command": BIN, "args":
# ["demo-server"]}, after `BIN list srvNN` has filled the metadata cache
# for each; prints the median, lowest and 90th percentile of RUNS (default
# 30) runs, the package initialisation of one run (GODEBUG=inittrace=1),
# and the load average before and after (the numbers mean little without it).
# Everything lives in a temporary directory (its own HOME), removed at exit.
set -eu
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
RUNS=${2:-30}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
export HOME="$DIR/home" XDG_CACHE_HOME="$DIR/cache" XDG_CONFIG_HOME="$DIR/config"
mkdir -p "$HOME" && cd "$DIR"
{
	printf '{"mcpServers": {'
	for i in $(seq -w 0 31); do
		[ "$i" = 00 ] || printf ','
		printf '"srv%s": {"command": "%s", "args": ["demo-server"]}' "$i" "$BIN"
	done
	printf '}}\n'
} >.mcp.json
for i in $(seq -w 0 31); do "$BIN" list "srv$i" >/dev/null 2>&1 || echo "list srv$i failed" >&2; done
"$BIN" status | head -2
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
echo "load average before: $(load)"
python3 - "$BIN" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
b, n = sys.argv[1], int(sys.argv[2])
t = []
for _ in range(n):
    t0 = time.perf_counter()
    subprocess.run([b, "status"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    t.append((time.perf_counter() - t0) * 1000)
t.sort()
print(f"status: median {statistics.median(t):.1f} ms, lowest {t[0]:.1f} ms, p90 {t[int(n * 0.9)]:.1f} ms ({n} runs)")
PY
GODEBUG=inittrace=1 "$BIN" status 2>&1 >/dev/null | awk '/^init/ { t += $5; if ($2 ~ /santhosh/) s = $5 } END { print "package init: " t " ms in all, santhosh-tekuri/jsonschema " s " ms" }'
echo "load average after: $(load)"
