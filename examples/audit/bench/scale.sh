#!/usr/bin/env bash
# scale.sh: the audit's whole-program benchmark (examples/audit/README.md, "Performance").
#
#   examples/audit/bench/scale.sh [PAGES]     # crawl a generated PAGES-page loopback shop (default 100000)
#   examples/audit/bench/scale.sh colly       # CPU side by side: colly v2 and the audit, 500 pages, 3 runs each
#                                             # (AUDIT2=path adds a second build to each round)
#
# The shop (bench/shop) is served on 127.0.0.1 by a Go program: 60 links and 22.7 KB a page, instant
# answers. The crawl is `audit -max-pages PAGES -max-depth 100 -gap 0 -concurrency 16`, database on disk.
# It prints wall time, user+sys CPU and peak RSS (from /usr/bin/time -v), the size of each table and index
# (SQLite's dbstat, read with the sqlite3 shell) and the time of each pass (the audit's -timings).
# Set AUDIT=path to measure another build, KEEP=dir to keep the database and profiles there, PROFILE=1
# for -cpuprofile/-memprofile. Needs go, /usr/bin/time and sqlite3 (apt-get install time sqlite3).
# Traffic stays on loopback.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
for tool in /usr/bin/time sqlite3 go; do
	command -v "$tool" >/dev/null || { echo "scale.sh: $tool is missing (apt-get install time sqlite3)" >&2; exit 2; }
done

audit=${AUDIT:-$work/audit}
[ -n "${AUDIT:-}" ] || (cd "$root" && go build -o "$audit" ./examples/audit)
(cd "$root" && go build -o "$work/shop" ./examples/audit/bench/shop)

shop_pid=
start_shop() { # start_shop PAGES: serves the shop, sets $shop_url
	stop_shop
	"$work/shop" -pages "$1" >"$work/shop.url" &
	shop_pid=$!
	for _ in $(seq 100); do [ -s "$work/shop.url" ] && break; sleep 0.05; done
	shop_url=$(head -1 "$work/shop.url")
}
stop_shop() { if [ -n "$shop_pid" ]; then kill "$shop_pid" 2>/dev/null || true; wait "$shop_pid" 2>/dev/null || true; shop_pid=; fi; }
trap 'stop_shop; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

# timed OUT CMD...: runs CMD under /usr/bin/time -v, its stdout and stderr in OUT.out, OUT.err, OUT.time
timed() {
	local out=$1; shift
	/usr/bin/time -v -o "$out.time" "$@" >"$out.out" 2>"$out.err"
}
field() { sed -n "s/^[[:space:]]*$2: //p" "$1.time"; } # field OUT NAME: a /usr/bin/time -v line
cpu_s() { awk -v u="$(field "$1" 'User time (seconds)')" -v s="$(field "$1" 'System time (seconds)')" 'BEGIN{printf "%.2f", u+s}'; }
wall_s() { field "$1" 'Elapsed (wall clock) time (h:mm:ss or m:ss)' | awk -F: '{s=0; for(i=1;i<=NF;i++) s=s*60+$i; printf "%.2f", s}'; }

if [ "${1:-}" = colly ]; then
	(cd "$root/examples/audit/bench/colly" && go build -o "$work/colly" .)
	start_shop 500
	printf '%-6s %-4s %8s %8s %12s %8s\n' tool run pages wall_s cpu_s/1000p pages/s
	for run in 1 2 3; do
		rm -f "$work"/c.db*
		timed "$work/colly$run" "$work/colly" -max-pages 500 "$shop_url"
		timed "$work/audit$run" "$audit" -db "$work/c.db" -max-pages 500 -max-depth 100 -gap 0 -concurrency 16 -quiet "$shop_url"
		tools="colly audit"
		if [ -n "${AUDIT2:-}" ]; then # a second build, in the same rounds
			rm -f "$work"/c2.db*
			timed "$work/audit2$run" "$AUDIT2" -db "$work/c2.db" -max-pages 500 -max-depth 100 -gap 0 -concurrency 16 -quiet "$shop_url"
			tools="$tools audit2"
		fi
		for tool in $tools; do
			out=$work/$tool$run
			case $tool in
			colly) pages=$(sed -n 's/^pages //p' "$out.out") ;;
			audit) pages=$(sqlite3 "$work/c.db" 'SELECT count(*) FROM pages') ;;
			audit2) pages=$(sqlite3 "$work/c2.db" 'SELECT count(*) FROM pages') ;;
			esac
			awk -v t=$tool -v r=$run -v p="$pages" -v w="$(wall_s "$out")" -v c="$(cpu_s "$out")" \
				'BEGIN{printf "%-6s %-4s %8d %8.2f %12.3f %8.0f\n", t, r, p, w, c/p*1000, p/w}'
		done
	done
	exit 0
fi

pages=${1:-100000}
start_shop "$pages"
prof=()
[ -z "${PROFILE:-}" ] || prof=(-cpuprofile "$work/cpu.pprof" -memprofile "$work/heap.pprof")
rm -f "$work"/scale.db*
echo "crawling $pages pages of $shop_url (load average $(cut -d' ' -f1-3 /proc/loadavg))"
timed "$work/scale" "$audit" -db "$work/scale.db" -max-pages "$pages" -max-depth 100 -gap 0 -concurrency 16 -quiet -timings "${prof[@]}" "$shop_url" &
timed_pid=$!
# Every 30 s, a line of $work/progress.tsv: seconds, pages written, the audit's RSS and peak RSS (MB), the
# database's size with its WAL (MB), the load average.
printf 'seconds\tpages\trss_mb\tpeak_rss_mb\tdb_mb\tload\n' >"$work/progress.tsv"
t0=$(date +%s)
while kill -0 "$timed_pid" 2>/dev/null; do
	sleep 30
	tpid=$(pgrep -P "$timed_pid" | head -1) || true # the subshell's /usr/bin/time, whose child is the audit
	[ -n "$tpid" ] || continue
	apid=$(pgrep -P "$tpid" | head -1) || true
	[ -n "$apid" ] || continue
	rss=$(awk '/^VmRSS/{r=$2} /^VmHWM/{h=$2} END{printf "%.0f\t%.0f", r/1024, h/1024}' "/proc/$apid/status" 2>/dev/null) || continue
	n=$(sqlite3 "file:$work/scale.db?mode=ro" 'SELECT count(*) FROM pages' 2>/dev/null || echo '?')
	db=$(stat -c %s "$work"/scale.db "$work"/scale.db-wal 2>/dev/null | awk '{s+=$1} END{printf "%.0f", s/1e6}')
	printf '%s\t%s\t%s\t%s\t%s\n' $(($(date +%s) - t0)) "$n" "$rss" "$db" "$(cut -d' ' -f1 /proc/loadavg)" >>"$work/progress.tsv"
done
wait "$timed_pid" || echo "scale.sh: the audit exited with status $?" >&2
stop_shop
crawled=$(sqlite3 "$work/scale.db" 'SELECT count(*) FROM pages')
links=$(sqlite3 "$work/scale.db" 'SELECT count(*) FROM links')
printf '%-28s %s\n' "pages crawled" "$crawled" "links" "$links" \
	"wall" "$(wall_s "$work/scale") s" \
	"CPU user+sys" "$(cpu_s "$work/scale") s ($(field "$work/scale" 'User time (seconds)') + $(field "$work/scale" 'System time (seconds)'))" \
	"peak RSS" "$(field "$work/scale" 'Maximum resident set size (kbytes)' | awk '{printf "%.0f MB", $1/1024}')" \
	"database" "$(stat -c %s "$work/scale.db" | awk '{printf "%.1f MB", $1/1e6}')"
sed -n 's/^timing \([a-z]*\) \(.*\)$/pass \1\t\2/p' "$work/scale.err" | awk -F'\t' '{printf "%-28s %s\n", $1, $2}'
echo "load average after           $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "table or index               MB"
sqlite3 "$work/scale.db" "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 14" |
	awk -F'|' '{printf "%-28s %8.1f\n", $1, $2/1e6}'
grep -v '^timing ' "$work/scale.err" | head -5 || true
