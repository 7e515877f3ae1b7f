package sitemap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"

	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/urlnorm"
)

// DefaultMaxFetches is the most sitemaps an Expander fetches in one call
// when MaxFetches is zero.
const DefaultMaxFetches = 100

// DefaultMaxDepth is the number of index levels an Expander follows when
// MaxDepth is zero: an index named in robots.txt is followed, an index it
// lists is followed, an index listed there is fetched but not followed.
const DefaultMaxDepth = 2

// Errors an Expander records in a Report.
var (
	// ErrStatus: the sitemap was answered with a status other than 2xx.
	ErrStatus = errors.New("HTTP status not 2xx")
	// ErrTruncated: the fetcher cut the body at its size cap, so the end of
	// the sitemap was never seen (set fetch.Client.MaxBodyBytes to 50 MiB
	// or more for full-size sitemaps).
	ErrTruncated = errors.New("body truncated by the fetcher's size cap")
	// ErrFetchLimit: a root sitemap was not fetched because MaxFetches
	// sitemaps were fetched already.
	ErrFetchLimit = errors.New("sitemap fetch limit reached")
)

// Fetcher fetches one URL politely; *fetch.Client implements it. The
// Result is never nil when the error is nil.
type Fetcher interface {
	Get(ctx context.Context, rawURL string) (*fetch.Result, error)
}

// Expander fetches sitemaps, follows indexes to a bounded depth and streams
// the page entries it finds. Every field but Fetcher has a useful zero value.
// An Expander holds no state between calls to Expand.
type Expander struct {
	// Fetcher does every request; use the run's polite *fetch.Client.
	Fetcher Fetcher
	// MaxDepth is how many levels of sitemap index are followed: 0 means
	// DefaultMaxDepth (2); negative means none (roots are read, the
	// children of a root index are not fetched).
	MaxDepth int
	// MaxFetches caps the sitemap requests of one Expand call; 0 means
	// DefaultMaxFetches. Children beyond it are counted, not fetched.
	MaxFetches int
	// MaxBytes, MaxEntries and Scope configure the Reader of each sitemap.
	MaxBytes   int64
	MaxEntries int
	Scope      Scope
}

// Source says where a page entry was found.
type Source struct {
	Sitemap string // URL of the sitemap, as listed
	Parent  string // URL of the index that listed it, "" for a root
	Level   int    // 0 for a root, 1 for a child of a root index...
}

// Report describes one sitemap fetched by Expand.
type Report struct {
	URL      string // as listed in robots.txt or in the parent index
	FinalURL string // after redirects; scope is judged against it
	Parent   string // the index that listed it, "" for a root
	Level    int    // 0 for a root
	Status   int    // HTTP status, 0 when no response arrived
	Kind     Kind
	Gzip     bool
	Bytes    int64 // uncompressed bytes read
	Entries  int   // entries read: pages, or child sitemaps of an index
	Skipped  Skips // entries skipped, by reason

	// For a sitemap index: what happened to the children it listed.
	Queued      int  // children queued for fetching
	Repeated    int  // children already fetched or queued (duplicates, cycles)
	NotFollowed int  // children not fetched because the index is too deep
	OverCap     int  // children not fetched because of MaxFetches
	Followed    bool // the index's children were followed (level < MaxDepth)

	Truncated bool  // the fetcher cut the body (see ErrTruncated)
	Err       error // fetch error, ErrStatus, or the Reader's error; nil when read whole
}

type job struct {
	url, parent string
	level       int
}

// Expand fetches roots (the Sitemap: URLs of robots.txt; never guess
// /sitemap.xml), follows the indexes among them to MaxDepth and calls page
// for every page entry as it is read, in breadth-first order. It returns one
// Report per sitemap fetched, in fetch order, plus one (with ErrFetchLimit)
// per root left out by MaxFetches. Each distinct sitemap URL is
// fetched at most once. The error is ctx's or page's, which stop the walk;
// a failing sitemap only fails its Report. page may be nil to only
// collect the reports. A page listed in several sitemaps is passed once per
// sitemap: the frontier dedupes, and remembering every page here would cost
// memory in proportion to the whole site.
func (e *Expander) Expand(ctx context.Context, roots []string, page func(Entry, Source) error) ([]Report, error) {
	maxDepth := e.MaxDepth
	switch {
	case maxDepth == 0:
		maxDepth = DefaultMaxDepth
	case maxDepth < 0:
		maxDepth = 0
	}
	maxFetches := e.MaxFetches
	if maxFetches <= 0 {
		maxFetches = DefaultMaxFetches
	}
	if e.Fetcher == nil {
		return nil, errors.New("sitemap: Expander.Fetcher is nil")
	}
	seen := make(map[string]struct{})
	var queue []job
	var reports []Report
	for _, u := range roots {
		k := key(u)
		if _, ok := seen[k]; ok {
			continue
		}
		if len(queue) >= maxFetches {
			reports = append(reports, Report{URL: u, Err: &Error{URL: u, Reason: ErrFetchLimit}})
			continue
		}
		seen[k] = struct{}{}
		queue = append(queue, job{url: u})
	}
	fetched := 0
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return reports, err
		}
		j := queue[0]
		queue = queue[1:]
		fetched++
		rep := Report{URL: j.url, Parent: j.parent, Level: j.level}
		perr := e.one(ctx, j, &rep, maxDepth, func(child string) {
			if j.level >= maxDepth {
				rep.NotFollowed++
				return
			}
			k := key(child)
			if _, ok := seen[k]; ok {
				rep.Repeated++
				return
			}
			if fetched+len(queue) >= maxFetches {
				rep.OverCap++
				return
			}
			seen[k] = struct{}{}
			rep.Queued++
			queue = append(queue, job{url: child, parent: j.url, level: j.level + 1})
		}, page)
		if rep.FinalURL != "" {
			// A redirect target listed elsewhere is the same sitemap.
			seen[key(rep.FinalURL)] = struct{}{}
		}
		reports = append(reports, rep)
		if perr != nil {
			return reports, perr
		}
	}
	return reports, ctx.Err()
}

// key is the identity of a sitemap URL for "fetched at most once".
func key(u string) string {
	if n, err := urlnorm.Normalize(u); err == nil {
		return n
	}
	return u
}

// one fetches and reads one sitemap, filling rep. It returns only page's error.
func (e *Expander) one(ctx context.Context, j job, rep *Report, maxDepth int, child func(string), page func(Entry, Source) error) error {
	res, err := e.Fetcher.Get(ctx, j.url)
	if res != nil {
		rep.Status = res.Status
		if res.FinalURL != "" && res.FinalURL != j.url {
			rep.FinalURL = res.FinalURL
		}
	}
	if err == nil && res == nil {
		err = &Error{URL: j.url, Detail: "fetcher returned no result"}
	}
	if err != nil {
		rep.Err = err
		return nil
	}
	if res.Status < 200 || res.Status > 299 {
		rep.Err = &Error{URL: j.url, Reason: ErrStatus, Detail: "HTTP " + strconv.Itoa(res.Status)}
		return nil
	}
	final := j.url
	if rep.FinalURL != "" {
		final = rep.FinalURL
	}
	var body io.Reader = bytes.NewReader(res.Body)
	if res.Truncated {
		rep.Truncated = true
		// The reader must see a failure, not a clean end: a cut text
		// sitemap would otherwise end in a partial URL.
		body = io.MultiReader(body, errorReader{ErrTruncated})
	}
	r := NewReader(body, final)
	r.MaxBytes, r.MaxEntries, r.Scope = e.MaxBytes, e.MaxEntries, e.Scope
	src := Source{Sitemap: j.url, Parent: j.parent, Level: j.level}
	var perr error
	for {
		ent, err := r.Next()
		if err != nil {
			if err != io.EOF {
				rep.Err = err
			}
			break
		}
		if ent.IsSitemap {
			child(ent.URL)
			continue
		}
		if page == nil {
			continue
		}
		if perr = page(ent, src); perr != nil {
			break
		}
	}
	rep.Kind, rep.Gzip, rep.Bytes = r.Kind(), r.Gzip(), r.BytesRead()
	rep.Entries, rep.Skipped = r.Count(), r.Skipped()
	rep.Followed = rep.Kind == KindIndex && j.level < maxDepth
	return perr
}

type errorReader struct{ err error }

func (r errorReader) Read([]byte) (int, error) { return 0, r.err }
