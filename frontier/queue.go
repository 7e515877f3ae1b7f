package frontier

import (
	"hash/maphash"
	"math/bits"
	"time"
)

// Queue stores the queued items and the set of URLs seen, so that a
// persistent or distributed store can replace the in-memory default.
// The Frontier calls it from one goroutine at a time (under its lock, so
// every method should be fast) and keeps its own counts per host and
// depth, so Pop must return the shallowest, oldest item. A store that must
// survive a restart implements PersistentQueue as well.
type Queue interface {
	// Visit records a normalized URL as seen and reports whether it had
	// been seen before. Every URL Add gets past the scope, depth and
	// stopped-host checks is visited, whether it is then queued or not
	// (page limit, robots refusal, failure); a URL queued is visited
	// first, then pushed once its robots.txt check allows it.
	Visit(url string) (seen bool, err error)
	// Push appends it to the queue of it.Host (it.URL, it.Depth, it.From
	// and it.Host are set; it.Lease is empty).
	Push(it Item) error
	// Pop removes and returns the shallowest item queued for host, the
	// oldest first among equally deep ones; ok is false when there is
	// none. It must return an item pushed at that depth: the Frontier
	// keeps the counts per host and depth and refuses anything else.
	Pop(host string) (it Item, ok bool, err error)
	// Drop removes every item queued for host and returns how many
	// (StopHost). Items Pop handed out are not affected.
	Drop(host string) (int, error)
}

// PersistentQueue is a Queue that outlives the process, so that a crawl
// that was killed (kill -9, power loss, Ctrl-C) resumes where it stopped:
// same seen set, same queue, same page budget, same politeness. The
// Frontier detects it by type assertion; the in-memory default does not
// implement it and pays nothing for it.
//
// The life of an item: Push stores it queued; Pop hands it out, which
// must not delete it but mark it leased (Pop may set it.Lease to find it
// again); Ack, called by Frontier.Done, finishes it for good. An item
// leased and never acknowledged — in flight when the process died — is
// queued again by the next Resume, so it is fetched again: delivery is at
// least once, and only items in flight at the crash are fetched twice.
// Drop removes the queued items of a host and records the host as stopped.
//
// The seen set is durable only through Push: after a restart the URLs
// seen are exactly those of the items ever pushed (queued, leased,
// acknowledged or dropped). A URL visited and not pushed — refused by
// robots.txt, past the page limit, or between its Visit and its Push when
// the process died — must be forgotten, so it is added again when the page
// linking to it is fetched again (that page was not acknowledged: the
// crawl loop calls Done after adding a page's links). Keep such visits in
// memory only. (Remembering them would lose the URL whose Add the crash
// cut short; a refused URL added again is refused again.)
//
// Calls must be applied in order and each atomically: a crash may lose a
// suffix of the calls, never keep a later one without an earlier one
// (Ack of a page after the Pushes of its links). Writing each call in its
// own transaction or batching several per transaction are both fine.
// Started, called for every request, is meant to be kept in memory and
// written with the next write; losing the last value only shortens the
// wait after a resume.
//
// Resuming: open the store, pass it as Config.Queue to New (which calls
// Resume before anything else), Add the start URLs again (they come back
// Duplicate, harmlessly) and run the crawl loop as usual. Stats after a
// resume count Done and Failed from the store; Requests starts again at 0.
type PersistentQueue interface {
	Queue
	// Resume is called once, by New, before any other method. It queues
	// again every item Pop handed out that Ack never acknowledged (in its
	// original place, so Pop's order holds) and reports what the store
	// holds. A new, empty store returns a zero ResumeState.
	Resume() (ResumeState, error)
	// Ack records that it, handed out by Pop and given back to
	// Frontier.Done with err (nil for success), is finished: it must not
	// come back on Resume, and it counts in ResumeHost.Done or Failed. it
	// is the Item Pop returned (Lease included).
	Ack(it Item, err error) error
	// Started records that the gate admitted a request to host at at (the
	// Frontier's clock). It is called under the Frontier's lock for every
	// request, robots.txt and retries included: remember the latest value
	// per host in memory and persist it with the next write. Resume gives
	// it back as ResumeHost.LastStart, so the first request after a resume
	// still waits out Gap (and PerHostGap) from the last one recorded
	// before the crash. A value lost in the crash only shortens that wait.
	Started(host string, at time.Time)
}

// ResumeState is what a reopened PersistentQueue holds, for New to
// rebuild its counts.
type ResumeState struct {
	// Hosts has an entry for every host with an item pushed or a request
	// started, keyed like Item.Host.
	Hosts map[string]ResumeHost
}

// ResumeHost is what a PersistentQueue holds for one host. The pages
// accepted so far, against which Config.MaxPages is checked, are the sum
// over hosts of the queued, done and failed items: every item Push stored
// that Drop did not remove.
type ResumeHost struct {
	// Queued[d] counts the items queued at depth d, those Pop had handed
	// out without Ack included (Resume queued them again).
	Queued []int
	// Done and Failed count the items acknowledged with a nil and a
	// non-nil error.
	Done, Failed int
	// Start is true when an item of depth 0 (a start URL) was pushed for
	// the host: with the default scope (Config.Scope nil) the host and its
	// www/apex twin are in scope again. (A start URL that was never queued,
	// say disallowed, restores its scope when it is Added again.)
	Start bool
	// Stopped is true when Drop was called for the host: later Adds for it
	// return Stopped, as before the crash.
	Stopped bool
	// LastStart is the latest time passed to Started for the host; zero
	// when none was recorded. A time after New's now counts as now.
	LastStart time.Time
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
