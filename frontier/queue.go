package frontier

import (
	"hash/maphash"
	"math/bits"
)

// Queue stores the queued items and the set of URLs seen, so that a
// persistent or distributed store can replace the in-memory default.
// The Frontier calls it from one goroutine at a time and keeps its own
// counts per host and depth, so Pop must return the shallowest, oldest item.
type Queue interface {
	// Visit records a normalized URL as seen and reports whether it had
	// been seen before.
	Visit(url string) (seen bool, err error)
	// Push appends it to the queue of it.Host.
	Push(it Item) error
	// Pop removes and returns the shallowest, oldest item queued for
	// host; ok is false when there is none.
	Pop(host string) (it Item, ok bool, err error)
	// Drop removes every item queued for host and returns how many.
	Drop(host string) (int, error)
}

// NewMemoryQueue returns the in-memory Queue: per host a FIFO per depth in
// growing chunks (about 32 bytes per queued item plus the URL string), and
// a set of 64-bit hashes for seen URLs (about 10 to 15 bytes each). Two
// URLs whose hashes collide count as one; for n URLs that happens with
// probability about n²/2⁶⁵ (3·10⁻⁸ at a million URLs). It is not safe for
// concurrent use on its own; the Frontier serializes calls.
func NewMemoryQueue() Queue {
	return &memQueue{hosts: make(map[string]*memHost), seen: newHashSet(maphash.MakeSeed())}
}

type memQueue struct {
	hosts map[string]*memHost
	seen  *hashSet
}

type memHost struct {
	levels []fifo // by depth
	n      int
}

func (q *memQueue) Visit(url string) (bool, error) {
	return !q.seen.add(q.seen.hash(url)), nil
}

func (q *memQueue) Push(it Item) error {
	h := q.hosts[it.Host]
	if h == nil {
		h = &memHost{}
		q.hosts[it.Host] = h
	}
	for len(h.levels) <= it.Depth {
		h.levels = append(h.levels, fifo{})
	}
	h.levels[it.Depth].push(entry{url: it.URL, from: it.From})
	h.n++
	return nil
}

func (q *memQueue) Pop(host string) (Item, bool, error) {
	h := q.hosts[host]
	if h == nil || h.n == 0 {
		return Item{}, false, nil
	}
	for d := range h.levels {
		if e, ok := h.levels[d].pop(); ok {
			h.n--
			if h.n == 0 {
				delete(q.hosts, host)
			}
			return Item{URL: e.url, Depth: d, From: e.from, Host: host}, true, nil
		}
	}
	return Item{}, false, nil
}

func (q *memQueue) Drop(host string) (int, error) {
	h := q.hosts[host]
	if h == nil {
		return 0, nil
	}
	delete(q.hosts, host)
	return h.n, nil
}

// entry is a queued item without what the queue already knows (host, depth).
type entry struct{ url, from string }

// fifo is a queue of entries in a list of chunks that double in size up to
// maxChunk, so a short queue wastes little and a long one needs no copying.
type fifo struct {
	head, tail *chunk
}

type chunk struct {
	items []entry
	r     int // next to pop
	next  *chunk
}

const minChunk, maxChunk = 4, 256

func (f *fifo) push(e entry) {
	t := f.tail
	if t == nil || len(t.items) == cap(t.items) {
		n := minChunk
		if t != nil {
			n = min(2*cap(t.items), maxChunk)
		}
		c := &chunk{items: make([]entry, 0, n)}
		if t == nil {
			f.head = c
		} else {
			t.next = c
		}
		f.tail, t = c, c
	}
	t.items = append(t.items, e)
}

func (f *fifo) pop() (entry, bool) {
	h := f.head
	if h == nil || h.r == len(h.items) {
		return entry{}, false
	}
	e := h.items[h.r]
	h.items[h.r] = entry{} // let the strings go
	h.r++
	if h.r == len(h.items) {
		if h.next != nil {
			f.head = h.next
		} else if len(h.items) == cap(h.items) {
			f.head, f.tail = nil, nil
		} else {
			h.items, h.r = h.items[:0], 0
		}
	}
	return e, true
}

// hashSet is an open-addressing set of non-zero 64-bit hashes with linear
// probing. The table size is not a power of two (slots are chosen by the
// high half of hash×size), so it can grow by 1.5× and keep between 8/0.8
// and 8·1.5/0.8 bytes per member.
type hashSet struct {
	seed  maphash.Seed
	slots []uint64
	n     int
}

const (
	hashSetMin     = 64
	hashSetMaxLoad = 0.8
)

func newHashSet(seed maphash.Seed) *hashSet {
	return &hashSet{seed: seed, slots: make([]uint64, hashSetMin)}
}

func (s *hashSet) hash(str string) uint64 {
	h := maphash.String(s.seed, str)
	if h == 0 {
		h = 1 // 0 marks an empty slot
	}
	return h
}

// add inserts h and reports whether it was new.
func (s *hashSet) add(h uint64) bool {
	if float64(s.n+1) > hashSetMaxLoad*float64(len(s.slots)) {
		s.grow()
	}
	if !insert(s.slots, h) {
		return false
	}
	s.n++
	return true
}

func insert(slots []uint64, h uint64) bool {
	i, _ := bits.Mul64(h, uint64(len(slots)))
	for {
		switch slots[i] {
		case 0:
			slots[i] = h
			return true
		case h:
			return false
		}
		i++
		if i == uint64(len(slots)) {
			i = 0
		}
	}
}

func (s *hashSet) grow() {
	// Double while small (fewer rehashes), then grow by half to bound the
	// bytes per member.
	n := len(s.slots) * 2
	if len(s.slots) >= 1<<16 {
		n = len(s.slots) + len(s.slots)/2
	}
	next := make([]uint64, n)
	for _, h := range s.slots {
		if h != 0 {
			insert(next, h)
		}
	}
	s.slots = next
}
