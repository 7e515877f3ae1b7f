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

// tag returns the key prefix "<prefix>{<crawl>}:" of shard i of a crawl,
// or, when it has several shards, "<prefix>{<crawl>/<i>}:" — or
// "<prefix>{<crawl>/<i>.<k>}:" with the least k that puts the tag's
// Cluster slot in the i-th of n equal bands of the 16384 slots. A cluster
// made with redis-cli --cluster create gives its masters equal contiguous
// slot ranges, so the shards split evenly over the masters instead of as
// a hash falls (measured: the busiest of 3 masters got 38–44 % of 36
// shards' work by hash).
func tag(prefix, crawl string, i, n int) string {
	if n == 1 {
		return prefix + ":{" + crawl + "}:"
	}
	base := crawl + "/" + strconv.Itoa(i)
	lo, hi := i*slots/n, (i+1)*slots/n
	t := base
	for k := 1; ; k++ {
		if s := int(crc16(t) % slots); lo <= s && s < hi {
			return prefix + ":{" + t + "}:"
		}
		t = base + "." + strconv.Itoa(k)
	}
}

// slots is the number of Redis Cluster hash slots.
const slots = 16384

// crc16 is the CRC-16/XMODEM Redis Cluster hashes keys with (polynomial
// 0x1021, initial 0): a key's slot is crc16(tag) mod 16384.
func crc16(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c ^= uint16(s[i]) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// Shards returns the hash tag of each of the crawl's shards, in shard
// order: every key of shard i contains "{" + Shards()[i] + "}", so
// CLUSTER KEYSLOT of it says which slot, and hence which master, holds
// the shard.
func (f *Frontier) Shards() []string {
	out := make([]string, len(f.tags))
	for i, t := range f.tags {
		a, b := strings.IndexByte(t, '{'), strings.IndexByte(t, '}')
		out[i] = t[a+1 : b]
	}
	return out
}

// urlHash is the seen-set member of a normalized URL: its 64-bit xxhash
// as a signed decimal (so Redis stores it as an integer), and its low bits
// that pick the bucket.
func urlHash(u string) (string, int64) {
	h := xxhash.Sum64String(u)
	return strconv.FormatInt(int64(h), 10), int64(h & (1<<lowBits - 1))
}
