package store

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Request outcomes in render_requests.outcome.
const (
	OutLoaded     = "loaded"         // sent, answered < 400
	OutFailed     = "failed"         // sent, answered >= 400 or a network error
	OutBlocked    = "blocked_robots" // same-site, disallowed by robots.txt: not sent
	OutNotLoaded  = "not_loaded"     // image, media or font: not sent, by design
	OutNotSent    = "not_sent"       // same-site non-GET, or the page was given up before the gate let it go
	OutCanceled   = "canceled"       // sent, then cancelled by the browser (page navigated or closed)
	OutUnfinished = "unfinished"     // sent, no answer by the time the page was given up
	OutSent       = "sent"           // transient: sent, not finished yet
)

// RenderCandidate is a crawled page the rendered pass may load.
type RenderCandidate struct {
	URL     string // pages.url
	Final   string // the document the crawler read (after redirects): what the browser loads
	Depth   int    // the crawl's depth of the page: the sample prefers shallow pages
	Section string // first path segment of Final ("/" for the home page): the sample's notion of a template
}

// RenderRequest is one request the browser made (one hop of a redirect chain is one request). Every one
// is recorded, sent or not, so the report can show what the gate and robots.txt let through.
type RenderRequest struct {
	URL, Host    string // as the browser asked for it; its host, for the per-host gate
	SameSite     bool   // on the crawled site: subject to robots.txt and the crawl's gate
	Type, Method string // the resource type the browser gave (Document, Script, Image...); GET, POST...
	Outcome      string // one of the Out* values: what became of it
	Status       int    // HTTP status, when it was answered
	Err          string // the network error, when it failed
	RobotsRule   string // the rule that disallowed it (Outcome blocked_robots)
	Cached       bool   // answered from the browser's cache: it did not reach the site
}

// ConsoleEntry is an uncaught exception or a console.error call.
type ConsoleEntry struct {
	Kind    string // exception | console_error
	Message string // the text as the browser reported it
	Source  string // url:line:column, when known
}

// RenderLink is one link of the rendered DOM.
type RenderLink struct {
	To           string // absolute, normalized when internal
	External     bool   // off the crawled site
	Nofollow     bool   // rel=nofollow
	Anchor, Tag  string // the anchor text; the element (a, area...)
	OnlyRendered bool   // an internal page link the crawler's HTML of the page did not have
}

// RenderRecord is one render_pages row and its children: the page as a browser showed it, next to what
// the crawler read (Raw), so the findings can name what only JavaScript adds or changes.
type RenderRecord struct {
	URL, FinalURL     string        // pages.url; where the browser's navigation ended
	CrawledFinal      string        // where the crawler's fetch of URL ended: its links are recorded under it
	Depth             int           // the crawl's depth of the page
	Section           string        // the sample's section (RenderCandidate.Section)
	RenderedAt        time.Time     // when the load event fired (or the page was given up)
	Load              time.Duration // navigation start to the load event
	Status            int           // HTTP status of the document as the browser got it
	Err               string        // the page could not be rendered: timeout, navigation error
	Parsed            bool          // the DOM was read: the fields below are meaningful
	Title             string        // the rendered DOM's fields, read as the crawler reads HTML (see PageRecord)
	TitleCount        int           // <title> elements
	Description       string        // the first meta description
	DescriptionCount  int           // meta descriptions
	Canonical         string        // rel=canonical, resolved
	MetaRobots        string        // the robots meta tag, which JavaScript may have changed
	H1                string        // the first h1
	H1Count           int           // h1 elements
	WordCount         int           // visible words
	Internal          int           // outgoing links on the site
	External          int           // outgoing links off it
	SiteRequests      int           // same-site requests let through the gate and not answered from cache
	OtherRequests     int           // requests to other hosts
	Blocked, NotSent  int           // requests disallowed by robots.txt; requests the browser made on its own, not sent
	NotLoaded, Failed int           // requests cancelled or unanswered; answered >= 400 or failed
	ConsoleErrors     int           // console.error calls
	Exceptions        int           // uncaught exceptions

	Hreflang []HreflangRecord // the rendered DOM's rel=alternate hreflang annotations
	Links    []RenderLink     // the rendered DOM's links
	Console  []ConsoleEntry   // the console errors and exceptions, in order
	Requests []*RenderRequest // every request of the page, in the order they were made

	Raw rawFields // the crawler's view of the page, for the analysis (loaded from pages)
}

// rawFields are the crawler's fields of a page, as the pages table has them.
type rawFields struct {
	Title                 string
	TitleCount            int
	Description           string
	DescriptionCount      int
	Canonical, MetaRobots string
	H1                    string
	H1Count               int
	Hreflang              []HreflangRecord
	// Nofollow has the page's internal link targets in the crawler's HTML: true when every link to the
	// target is rel=nofollow.
	Nofollow map[string]bool
}

// RenderStats are the pass's running totals, for the progress line and the summary.
type RenderStats struct {
	Sampled  atomic.Int64 // pages the sample chose
	Done     atomic.Int64 // pages rendered or given up
	Failed   atomic.Int64 // pages that could not be rendered
	Site     atomic.Int64 // requests that reached the site
	Other    atomic.Int64 // requests to other hosts
	Blocked  atomic.Int64 // same-site requests disallowed by robots.txt
	Skipped  atomic.Int64 // images, media, fonts
	Started  time.Time    // when the pass began
	Ended    time.Time    // when it ended
	Ua       string       // the browser's own User-Agent
	letMu    sync.Mutex
	let      map[string]int // URLs a tab let go, not yet seen by the browser-wide interception
	Unseen   atomic.Int64   // requests the browser made on its own (no tab saw them): not sent
	SendMu   sync.Mutex     // guards LastSent, which the tabs and the browser-wide listener both write
	LastSent time.Time      // when the browser last reported a request to the site sent (SendMu)
	Ran      bool           // the pass started: a render_runs row is written
	Outcome  string         // finished | failed | interrupted, for render_runs
	ErrorMsg string         // why it failed (the browser would not start, a write error)
}

// MarkLet notes that a tab lets a request for raw go: the browser-wide interception will see it next
// and let it through. UnmarkLet undoes it when the continue failed.
func (st *RenderStats) MarkLet(raw string) {
	st.letMu.Lock()
	defer st.letMu.Unlock()
	if st.let == nil {
		st.let = map[string]int{}
	}
	st.let[raw]++
}

// UnmarkLet undoes one MarkLet for raw, when the tab's continue failed; false if none was marked, so the
// browser-wide interception does not let through a request no tab let go.
func (st *RenderStats) UnmarkLet(raw string) bool {
	st.letMu.Lock()
	defer st.letMu.Unlock()
	if st.let[raw] == 0 {
		return false
	}
	if st.let[raw]--; st.let[raw] == 0 {
		delete(st.let, raw)
	}
	return true
}

// renderSchema holds what the rendered pass records (documented in RENDER.md). Rows are written per
// page as each page is done, in their own transaction, so an interrupted pass keeps what it rendered.
const renderSchema = `
CREATE TABLE IF NOT EXISTS render_runs (
	crawl_id      INTEGER NOT NULL REFERENCES crawls(id),
	browser       TEXT NOT NULL,          -- the browser program
	user_agent    TEXT,                   -- the browser's own User-Agent, sent unchanged
	requested     INTEGER NOT NULL,       -- -render N
	sampled       INTEGER NOT NULL,       -- pages in the sample (fewer when the crawl found fewer)
	rendered      INTEGER,                -- render_pages rows written
	site_requests INTEGER,                -- browser requests that reached the audited site
	started_at    TEXT NOT NULL,
	finished_at   TEXT,
	outcome       TEXT NOT NULL           -- running | finished | interrupted
);
CREATE TABLE IF NOT EXISTS render_pages (
	crawl_id          INTEGER NOT NULL REFERENCES crawls(id),
	url               TEXT NOT NULL,      -- the pages row it renders (pages.url)
	final_url         TEXT,               -- the document's URL in the browser, after redirects and script navigation
	depth             INTEGER NOT NULL,
	section           TEXT NOT NULL,      -- the sample's group: first path segment
	rendered_at       TEXT NOT NULL,
	load_ms           REAL,               -- navigation start to the load event
	status            INTEGER,            -- HTTP status of the document as the browser got it
	error             TEXT,               -- why the page could not be rendered (timeout, navigation error)
	title             TEXT,               -- the rendered DOM's fields, read with the crawler's parser;
	title_count       INTEGER,            -- NULL when the page could not be rendered
	meta_description  TEXT,
	description_count INTEGER,
	canonical         TEXT,
	meta_robots       TEXT,
	h1                TEXT,
	h1_count          INTEGER,
	word_count        INTEGER,
	links_internal    INTEGER,
	links_external    INTEGER,
	site_requests     INTEGER NOT NULL,   -- requests to the site let through the gate (cache hits not counted)
	other_requests    INTEGER NOT NULL,   -- requests to other hosts
	blocked_robots    INTEGER NOT NULL,   -- same-site requests refused by robots.txt, not sent
	not_loaded        INTEGER NOT NULL,   -- images, media, fonts: never sent
	not_sent          INTEGER NOT NULL,   -- same-site non-GET/HEAD, or given up at the gate
	failed            INTEGER NOT NULL,   -- answered >= 400 or a network error
	console_errors    INTEGER NOT NULL,   -- console.error calls
	exceptions        INTEGER NOT NULL,   -- uncaught exceptions and unhandled rejections
	hreflang          TEXT,               -- JSON [{"hreflang","url"}...] of the rendered DOM, as pages.hreflang
	PRIMARY KEY (crawl_id, url)
);
CREATE TABLE IF NOT EXISTS render_links (
	crawl_id      INTEGER NOT NULL REFERENCES crawls(id),
	page_url      TEXT NOT NULL,          -- render_pages.url
	to_url        TEXT NOT NULL,          -- absolute, normalized when internal
	external      INTEGER NOT NULL,
	nofollow      INTEGER NOT NULL,
	anchor        TEXT,
	tag           TEXT,                   -- a | area
	only_rendered INTEGER NOT NULL        -- internal, and not in the HTML the crawler read
);
CREATE INDEX IF NOT EXISTS render_links_page ON render_links(crawl_id, page_url);
CREATE TABLE IF NOT EXISTS render_console (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	page_url  TEXT NOT NULL,
	kind      TEXT NOT NULL,              -- exception | console_error
	message   TEXT NOT NULL,
	source    TEXT                        -- script URL:line:column, when known
);
CREATE TABLE IF NOT EXISTS render_requests (
	crawl_id      INTEGER NOT NULL REFERENCES crawls(id),
	page_url      TEXT NOT NULL,
	url           TEXT NOT NULL,          -- one row per request; a redirect hop is a request
	host          TEXT,
	same_site     INTEGER NOT NULL,       -- start host or its twin: robots.txt and the gate applied
	resource_type TEXT,                   -- Document, Script, Stylesheet, XHR, Fetch, Image...
	method        TEXT,
	outcome       TEXT NOT NULL,          -- loaded | failed | blocked_robots | not_loaded | not_sent | canceled | unfinished
	status        INTEGER,
	error         TEXT,                   -- network error, or why it was not sent
	robots_rule   TEXT,                   -- blocked_robots: the rule that refused it
	cached        INTEGER NOT NULL        -- answered from the browser's cache: it did not reach the site
);
CREATE INDEX IF NOT EXISTS render_requests_page ON render_requests(crawl_id, page_url);
CREATE VIEW IF NOT EXISTS render_hosts AS
	SELECT crawl_id, page_url, host, same_site,
		COUNT(*) AS requests,
		SUM(outcome IN ('loaded','failed','canceled','unfinished') AND cached = 0) AS sent,
		SUM(outcome = 'blocked_robots') AS blocked_robots,
		SUM(outcome = 'not_loaded') AS not_loaded
	FROM render_requests GROUP BY crawl_id, page_url, host, same_site;
`

// RenderCandidates lists the pages the rendered pass may load: HTML answered 200 that the crawl fetched
// and parsed, one per document (a URL that redirected to a page is that page), on the site.
func (s *Store) RenderCandidates(ctx context.Context, inScope func(*url.URL) bool) ([]RenderCandidate, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT url, COALESCE(final_url, url), depth FROM pages
		WHERE crawl_id = ? AND status = 200 AND title IS NOT NULL AND blocked_by_robots = 0
		ORDER BY depth, url`, s.CrawlID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RenderCandidate
	seen := map[string]bool{}
	for rows.Next() {
		var c RenderCandidate
		if err := rows.Scan(&c.URL, &c.Final, &c.Depth); err != nil {
			return nil, err
		}
		u, err := url.Parse(c.Final)
		if err != nil || !inScope(u) || seen[c.Final] {
			continue
		}
		seen[c.Final] = true
		out = append(out, c)
	}
	return out, rows.Err()
}

// RawLinkTargets are the internal page links the crawler found in a page's HTML.
func (s *Store) RawLinkTargets(pageURL string) (map[string]bool, error) {
	rows, err := s.db.Query(`SELECT to_url FROM links WHERE crawl_id = ? AND from_url = ? AND external = 0`, s.CrawlID, pageURL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		out[u] = true
	}
	return out, rows.Err()
}

// BeginRender adds the render_runs row; it returns its rowid (0 when the write failed, which is
// reported as the store's error).
func (s *Store) BeginRender(browser, ua string, requested, sampled int, started time.Time) int64 {
	res, err := s.db.Exec(`INSERT INTO render_runs (crawl_id, browser, user_agent, requested, sampled, started_at, outcome) VALUES (?,?,?,?,?,?, 'running')`,
		s.CrawlID, browser, nullStr(ua), requested, sampled, fmtTime(started))
	if err != nil {
		s.SetErr(fmt.Errorf("write render run: %w", err))
		return 0
	}
	id, _ := res.LastInsertId()
	return id
}

// EndRender closes the render_runs row.
func (s *Store) EndRender(id int64, st *RenderStats) {
	if id == 0 {
		return
	}
	_, err := s.db.Exec(`UPDATE render_runs SET finished_at = ?, outcome = ?, rendered = ?, site_requests = ? WHERE rowid = ?`,
		fmtTime(st.Ended), st.Outcome, st.Done.Load(), st.Site.Load(), id)
	if err != nil {
		s.SetErr(fmt.Errorf("write render run: %w", err))
	}
}

// WriteRendered writes one rendered page and its rows in one transaction. A background context on
// purpose: a page rendered before Ctrl-C is kept.
func (s *Store) WriteRendered(r *RenderRecord) error {
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	fields := []any{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
	if r.Parsed {
		var hreflang any
		if len(r.Hreflang) > 0 {
			b, _ := json.Marshal(r.Hreflang)
			hreflang = string(b)
		}
		fields = []any{r.Title, r.TitleCount, r.Description, r.DescriptionCount, r.Canonical, r.MetaRobots, r.H1, r.H1Count,
			r.WordCount, r.Internal, r.External, hreflang}
	}
	args := []any{s.CrawlID, r.URL, nullStr(r.FinalURL), r.Depth, r.Section, fmtTime(r.RenderedAt), ms(r.Load), nullInt(r.Status), nullStr(r.Err)}
	args = append(args, fields...)
	args = append(args, r.SiteRequests, r.OtherRequests, r.Blocked, r.NotLoaded, r.NotSent, r.Failed, r.ConsoleErrors, r.Exceptions)
	if _, err := tx.Exec(`INSERT OR REPLACE INTO render_pages (crawl_id, url, final_url, depth, section, rendered_at, load_ms, status, error,
		title, title_count, meta_description, description_count, canonical, meta_robots, h1, h1_count, word_count, links_internal, links_external,
		hreflang, site_requests, other_requests, blocked_robots, not_loaded, not_sent, failed, console_errors, exceptions)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...); err != nil {
		return fmt.Errorf("write rendered page %s: %w", r.URL, err)
	}
	for _, l := range r.Links {
		if _, err := tx.Exec(`INSERT INTO render_links (crawl_id, page_url, to_url, external, nofollow, anchor, tag, only_rendered) VALUES (?,?,?,?,?,?,?,?)`,
			s.CrawlID, r.URL, l.To, B2i(l.External), B2i(l.Nofollow), l.Anchor, l.Tag, B2i(l.OnlyRendered)); err != nil {
			return fmt.Errorf("write rendered link %s: %w", r.URL, err)
		}
	}
	for _, e := range r.Console {
		if _, err := tx.Exec(`INSERT INTO render_console (crawl_id, page_url, kind, message, source) VALUES (?,?,?,?,?)`,
			s.CrawlID, r.URL, e.Kind, e.Message, nullStr(e.Source)); err != nil {
			return fmt.Errorf("write console message %s: %w", r.URL, err)
		}
	}
	for _, q := range r.Requests {
		if _, err := tx.Exec(`INSERT INTO render_requests (crawl_id, page_url, url, host, same_site, resource_type, method, outcome, status, error, robots_rule, cached)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
			s.CrawlID, r.URL, q.URL, nullStr(q.Host), B2i(q.SameSite), nullStr(q.Type), nullStr(q.Method), q.Outcome, nullInt(q.Status),
			nullStr(q.Err), nullStr(q.RobotsRule), B2i(q.Cached)); err != nil {
			return fmt.Errorf("write rendered request %s: %w", q.URL, err)
		}
	}
	return tx.Commit()
}

// LoadRendered reads the rendered pages back for the analysis, each with the crawler's fields of the
// same page (the pages row it renders) and the rows the findings need.
func (s *Store) LoadRendered(ctx context.Context) ([]*RenderRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.url, COALESCE(r.final_url, ''), COALESCE(r.status, 0), COALESCE(r.error, ''),
		r.title IS NOT NULL, COALESCE(r.title, ''), COALESCE(r.title_count, 0), COALESCE(r.canonical, ''), COALESCE(r.meta_robots, ''),
		COALESCE(r.h1, ''), COALESCE(r.h1_count, 0), r.exceptions, r.console_errors,
		COALESCE(p.title, ''), COALESCE(p.title_count, 0), COALESCE(p.canonical, ''), COALESCE(p.meta_robots, ''),
		COALESCE(p.h1, ''), COALESCE(p.h1_count, 0),
		COALESCE(r.meta_description, ''), COALESCE(r.description_count, 0), COALESCE(r.hreflang, ''),
		COALESCE(p.meta_description, ''), COALESCE(p.description_count, 0), COALESCE(p.hreflang, '')
		FROM render_pages r JOIN pages p ON p.crawl_id = r.crawl_id AND p.url = r.url
		WHERE r.crawl_id = ? ORDER BY r.url`, s.CrawlID)
	if err != nil {
		return nil, err
	}
	var out []*RenderRecord
	byURL := map[string]*RenderRecord{}
	for rows.Next() {
		r := &RenderRecord{}
		var hreflang, rawHreflang string
		if err := rows.Scan(&r.URL, &r.FinalURL, &r.Status, &r.Err, &r.Parsed, &r.Title, &r.TitleCount, &r.Canonical, &r.MetaRobots,
			&r.H1, &r.H1Count, &r.Exceptions, &r.ConsoleErrors,
			&r.Raw.Title, &r.Raw.TitleCount, &r.Raw.Canonical, &r.Raw.MetaRobots, &r.Raw.H1, &r.Raw.H1Count,
			&r.Description, &r.DescriptionCount, &hreflang, &r.Raw.Description, &r.Raw.DescriptionCount, &rawHreflang); err != nil {
			rows.Close()
			return nil, err
		}
		if hreflang != "" {
			_ = json.Unmarshal([]byte(hreflang), &r.Hreflang)
		}
		if rawHreflang != "" {
			_ = json.Unmarshal([]byte(rawHreflang), &r.Raw.Hreflang)
		}
		out = append(out, r)
		byURL[r.URL] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	err = s.each(ctx, `SELECT page_url, to_url, external, nofollow, COALESCE(anchor,''), COALESCE(tag,''), only_rendered FROM render_links WHERE crawl_id = ? ORDER BY rowid`,
		func(sc func(...any) error) error {
			var page string
			var l RenderLink
			if err := sc(&page, &l.To, &l.External, &l.Nofollow, &l.Anchor, &l.Tag, &l.OnlyRendered); err != nil {
				return err
			}
			if r := byURL[page]; r != nil {
				r.Links = append(r.Links, l)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	// The crawler's internal links of each rendered page, recorded under the URL its fetch ended at.
	err = s.each(ctx, `SELECT r.url, l.to_url, MIN(l.nofollow) FROM render_pages r
		JOIN pages p ON p.crawl_id = r.crawl_id AND p.url = r.url
		JOIN links l ON l.crawl_id = r.crawl_id AND l.from_url = COALESCE(NULLIF(p.final_url, ''), p.url) AND l.external = 0
		WHERE r.crawl_id = ? GROUP BY r.url, l.to_url`,
		func(sc func(...any) error) error {
			var page, to string
			var nofollow bool
			if err := sc(&page, &to, &nofollow); err != nil {
				return err
			}
			if r := byURL[page]; r != nil {
				if r.Raw.Nofollow == nil {
					r.Raw.Nofollow = map[string]bool{}
				}
				r.Raw.Nofollow[to] = nofollow
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	err = s.each(ctx, `SELECT page_url, kind, message, COALESCE(source,'') FROM render_console WHERE crawl_id = ? ORDER BY rowid`,
		func(sc func(...any) error) error {
			var page string
			var e ConsoleEntry
			if err := sc(&page, &e.Kind, &e.Message, &e.Source); err != nil {
				return err
			}
			if r := byURL[page]; r != nil {
				r.Console = append(r.Console, e)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	err = s.each(ctx, `SELECT page_url, url, COALESCE(host,''), same_site, COALESCE(resource_type,''), COALESCE(method,''), outcome,
		COALESCE(status,0), COALESCE(error,''), COALESCE(robots_rule,''), cached FROM render_requests WHERE crawl_id = ? ORDER BY rowid`,
		func(sc func(...any) error) error {
			var page string
			q := &RenderRequest{}
			if err := sc(&page, &q.URL, &q.Host, &q.SameSite, &q.Type, &q.Method, &q.Outcome, &q.Status, &q.Err, &q.RobotsRule, &q.Cached); err != nil {
				return err
			}
			if r := byURL[page]; r != nil {
				r.Requests = append(r.Requests, q)
			}
			return nil
		})
	return out, err
}

// each runs a query with the crawl id and calls fn for every row with the row's Scan.
func (s *Store) each(ctx context.Context, query string, fn func(scan func(...any) error) error) error {
	rows, err := s.db.QueryContext(ctx, query, s.CrawlID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}
