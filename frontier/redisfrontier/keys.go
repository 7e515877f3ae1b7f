package redisfrontier

import (
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/politecrawl/polite/frontier"
)

// unitOf returns the unit of politeness of a normalized host[:port]: the
// host with its www/apex twin folded onto the apex, so that a site's two
// names share one queue, one seen set and one budget.
func unitOf(host string) string {
	if rest, ok := strings.CutPrefix(host, "www."); ok && frontier.Twin(host) == rest {
		return rest
	}
	return host
}

// shardOf returns the shard of a unit.
func (f *Frontier) shardOf(unit string) int {
	if len(f.tags) == 1 {
		return 0
	}
	return int(xxhash.Sum64String(unit) % uint64(len(f.tags)))
}

// tag returns the key prefix "<prefix>{<crawl>}:" of shard i of a crawl
// ("<prefix>{<crawl>/<i>}:" when it has several shards).
func tag(prefix, crawl string, i, n int) string {
	t := crawl
	if n > 1 {
		t += "/" + strconv.Itoa(i)
	}
	return prefix + ":{" + t + "}:"
}

// urlHash is the seen-set member of a normalized URL: its 64-bit xxhash
// as a signed decimal (so Redis stores it as an integer), and its low bits
// that pick the bucket.
func urlHash(u string) (string, int64) {
	h := xxhash.Sum64String(u)
	return strconv.FormatInt(int64(h), 10), int64(h & (1<<lowBits - 1))
}
