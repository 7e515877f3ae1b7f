package frontier

// hostHeap orders hosts by when they may start (readyAt), then by their
// shallowest queued depth, then by first appearance. It is a hand-written
// binary heap rather than container/heap to avoid interface calls on the
// hot path and to keep each host's index.
type hostHeap struct{ h []*host }

func (q *hostHeap) len() int   { return len(q.h) }
func (q *hostHeap) top() *host { return q.h[0] }

func (q *hostHeap) less(f *Frontier, a, b *host) bool {
	ra, rb := f.readyAt(a), f.readyAt(b)
	if ra != rb {
		return ra < rb
	}
	if a.minDepth != b.minDepth {
		return a.minDepth < b.minDepth
	}
	return a.id < b.id
}

func (q *hostHeap) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].heapIdx = i
	q.h[j].heapIdx = j
}

func (q *hostHeap) up(f *Frontier, j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !q.less(f, q.h[j], q.h[i]) {
			break
		}
		q.swap(i, j)
		j = i
	}
}

func (q *hostHeap) down(f *Frontier, i int) bool {
	i0, n := i, len(q.h)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && q.less(f, q.h[r], q.h[j]) {
			j = r
		}
		if !q.less(f, q.h[j], q.h[i]) {
			break
		}
		q.swap(i, j)
		i = j
	}
	return i > i0
}

func (q *hostHeap) push(f *Frontier, h *host) {
	h.heapIdx = len(q.h)
	q.h = append(q.h, h)
	q.up(f, h.heapIdx)
}

func (q *hostHeap) remove(f *Frontier, i int) {
	n := len(q.h) - 1
	if i != n {
		q.swap(i, n)
	}
	q.h[n].heapIdx = -1
	q.h[n] = nil
	q.h = q.h[:n]
	if i != n {
		q.fix(f, i)
	}
}

func (q *hostHeap) fix(f *Frontier, i int) {
	if !q.down(f, i) {
		q.up(f, i)
	}
}

// init empties the heap; callers re-add the eligible hosts.
func (q *hostHeap) init(f *Frontier) {
	for _, h := range q.h {
		h.heapIdx = -1
	}
	clear(q.h)
	q.h = q.h[:0]
}
