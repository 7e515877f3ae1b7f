package fetch

import (
	"context"
	"net/http"
	"strings"
	"sync"
)

// Validators are what a page's last 200 response said about itself, sent
// back as If-None-Match and If-Modified-Since by a conditional GET.
type Validators struct {
	ETag         string // the ETag header, as sent (weak "W/" ones included)
	LastModified string // the Last-Modified header, as sent
	Size         int64  // bytes of the body that response carried: what a 304 saves
}

// ValidatorStore keeps the validators of pages by URL (the URL that
// answered 200, after redirects) for conditional GETs (Client.Validators).
// Load reports ok false for a URL it has nothing for. A store backed by a
// database returns its errors; fetch then fails the call naming the URL,
// since a validator lost silently would make the next check a full fetch
// reported as "changed".
type ValidatorStore interface {
	Load(ctx context.Context, url string) (v Validators, ok bool, err error)
	Store(ctx context.Context, url string, v Validators) error
	Delete(ctx context.Context, url string) error
}

// DefaultMaxValidators is how many URLs a zero MemoryValidators keeps.
const DefaultMaxValidators = 100_000

// MemoryValidators is the in-memory ValidatorStore. It keeps at most Max
// URLs (0 means DefaultMaxValidators), forgetting an arbitrary one to
// make room: a forgotten URL is fetched in full once. The zero value is
// ready to use and safe for concurrent use.
type MemoryValidators struct {
	Max int

	mu sync.Mutex
	m  map[string]Validators
}

// Load returns the validators stored for url.
func (s *MemoryValidators) Load(_ context.Context, url string) (Validators, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[url]
	return v, ok, nil
}

// Store records v for url.
func (s *MemoryValidators) Store(_ context.Context, url string, v Validators) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]Validators)
	}
	limit := s.Max
	if limit <= 0 {
		limit = DefaultMaxValidators
	}
	if _, ok := s.m[url]; !ok && len(s.m) >= limit {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[url] = v
	return nil
}

// Delete forgets url.
func (s *MemoryValidators) Delete(_ context.Context, url string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, url)
	return nil
}

// Len returns how many URLs are stored.
func (s *MemoryValidators) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// conditionalHeader returns h with v's validators added (a copy), or h.
func conditionalHeader(h http.Header, v Validators) http.Header {
	if v.ETag == "" && v.LastModified == "" {
		return h
	}
	c := h.Clone()
	if v.ETag != "" {
		c.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		c.Set("If-Modified-Since", v.LastModified)
	}
	return c
}

// noStore reports whether h forbids storing the response (Cache-Control:
// no-store, RFC 9111 §5.2.2.5).
func noStore(h http.Header) bool {
	for _, v := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(d), "=")
			if strings.EqualFold(strings.TrimSpace(name), "no-store") {
				return true
			}
		}
	}
	return false
}

// updateValidators records what the final response of a GET for url says:
// a 304 to a conditional request marks res Unchanged (keeping the stored
// body size, and any new validator the 304 sent); a 2xx stores its
// validators, or deletes the URL's when it has none or says no-store; a
// redirect, 404 or 410 deletes them. Other statuses (5xx, 429) leave the
// store alone.
func (c *Client) updateValidators(ctx context.Context, url string, res *Result, had Validators, known bool) error {
	s := c.Validators
	sent := known && (had.ETag != "" || had.LastModified != "")
	switch {
	case res.Status == http.StatusNotModified && sent:
		res.Unchanged = true
		res.BytesSaved = had.Size
		res.Body = nil
		if noStore(res.Header) {
			return s.Delete(ctx, url)
		}
		v := had
		if e := res.Header.Get("ETag"); e != "" {
			v.ETag = e
		}
		if lm := res.Header.Get("Last-Modified"); lm != "" {
			v.LastModified = lm
		}
		if v != had {
			return s.Store(ctx, url, v)
		}
		return nil
	case res.Status >= 200 && res.Status < 300:
		v := Validators{ETag: res.Header.Get("ETag"), LastModified: res.Header.Get("Last-Modified"), Size: int64(len(res.Body))}
		if noStore(res.Header) || (v.ETag == "" && v.LastModified == "") {
			if known {
				return s.Delete(ctx, url)
			}
			return nil
		}
		return s.Store(ctx, url, v)
	case known && (isRedirect(res.Status) || res.Status == http.StatusNotFound || res.Status == http.StatusGone):
		return s.Delete(ctx, url) // the URL no longer answers with the page those validators describe
	}
	return nil
}
