-- The audit database's schema before the checks issue (store.Schema at commit fa4fa85), for the test
-- that the report, the exports and compare read a database an earlier version wrote.
CREATE TABLE IF NOT EXISTS crawls (
	id            INTEGER PRIMARY KEY,
	start_url     TEXT NOT NULL,
	user_agent    TEXT NOT NULL,
	robots_token  TEXT NOT NULL,          -- robots.txt product tokens in order of preference, comma-separated
	started_at    TEXT NOT NULL,
	finished_at   TEXT,
	settings      TEXT NOT NULL,          -- JSON: max_pages, max_depth, concurrency, gap, timeout, resolve
	outcome       TEXT NOT NULL,          -- running | finished | interrupted | off_limits | refused | failed
	message       TEXT,                   -- why it stopped, when it did not finish
	pages         INTEGER,                -- page rows written (fetched + blocked)
	requests      INTEGER,                -- HTTP requests sent, all kinds
	slowed_at     TEXT,                   -- when a 429 slowed the rest of the run down
	slowed_by     TEXT                    -- the URL that answered that 429
);
CREATE TABLE IF NOT EXISTS pages (
	crawl_id          INTEGER NOT NULL REFERENCES crawls(id),
	url               TEXT NOT NULL,      -- normalized URL as queued
	final_url         TEXT,               -- after redirects
	status            INTEGER,            -- final HTTP status; NULL when no response (blocked, error)
	redirects         TEXT,               -- JSON [{"url","status","location"}...], one per hop
	redirect_count    INTEGER NOT NULL DEFAULT 0,
	depth             INTEGER NOT NULL,
	found_on          TEXT,               -- the page it was first found on ('' = start page / sitemap)
	source            TEXT NOT NULL,      -- start | link | sitemap | redirect
	content_type      TEXT,
	response_ms       REAL,               -- the server's time for the final request: ttfb_ms plus the download of the body
	                                      -- (never time waiting at the politeness gate, for robots.txt or between retries)
	ttfb_ms           REAL,               -- final request: sent -> response headers
	bytes             INTEGER,
	truncated         INTEGER NOT NULL DEFAULT 0,
	attempts          INTEGER,            -- requests sent for it: retries and redirect hops included
	title             TEXT,
	title_count       INTEGER,
	meta_description  TEXT,
	description_count INTEGER,
	canonical         TEXT,
	meta_robots       TEXT,
	x_robots_tag      TEXT,
	h1                TEXT,               -- first h1
	h1_count          INTEGER,
	word_count        INTEGER,
	links_internal    INTEGER,
	links_external    INTEGER,
	links_nofollow    INTEGER,
	wordpress         INTEGER NOT NULL DEFAULT 0, -- the page looks like WordPress
	wordpress_hint    TEXT,               -- why, e.g. generator "WordPress 6.4"
	blocked_by_robots INTEGER NOT NULL DEFAULT 0,
	robots_rule       TEXT,               -- the rule that blocked it
	error             TEXT,               -- transport error, timeout, redirect problem
	error_kind        TEXT,               -- timeout | network | too_many_redirects | redirect_loop | bad_redirect | disallowed_redirect | offsite_redirect | off_limits | other
	fetched_at        TEXT,
	PRIMARY KEY (crawl_id, url)
);
CREATE TABLE IF NOT EXISTS links (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	from_url  TEXT NOT NULL,
	to_url    TEXT NOT NULL,              -- absolute, normalized when internal
	external  INTEGER NOT NULL,
	nofollow  INTEGER NOT NULL,
	anchor    TEXT,
	tag       TEXT                        -- a, link, area, img, script...
);
CREATE INDEX IF NOT EXISTS links_to ON links(crawl_id, to_url);
CREATE INDEX IF NOT EXISTS links_from ON links(crawl_id, from_url);
CREATE TABLE IF NOT EXISTS findings (
	id        INTEGER PRIMARY KEY,
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,
	kind      TEXT NOT NULL,
	detail    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS findings_kind ON findings(crawl_id, kind);
CREATE TABLE IF NOT EXISTS sitemaps (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,
	parent    TEXT,                       -- '' for a sitemap named in robots.txt
	level     INTEGER NOT NULL,           -- 0 = named in robots.txt
	status    INTEGER,
	kind      TEXT,                       -- urlset | sitemapindex | text | rss | atom
	entries   INTEGER,
	skipped   INTEGER,                    -- entries skipped: invalid, duplicate, outside the sitemap's scope
	not_followed INTEGER,                 -- index children not fetched: deeper than two levels
	error     TEXT
);
CREATE TABLE IF NOT EXISTS sitemap_urls (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	sitemap   TEXT NOT NULL,
	url       TEXT NOT NULL               -- as listed
);
CREATE INDEX IF NOT EXISTS sitemap_urls_url ON sitemap_urls(crawl_id, url);
CREATE TABLE IF NOT EXISTS requests (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,
	purpose   TEXT NOT NULL,              -- llms | wordpress
	status    INTEGER,
	content_type TEXT,
	location  TEXT,
	bytes     INTEGER,
	error     TEXT
);
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
CREATE TABLE IF NOT EXISTS robots_cache (
	crawl_id   INTEGER NOT NULL REFERENCES crawls(id),
	authority  TEXT NOT NULL,             -- scheme://host[:port]
	url        TEXT NOT NULL,             -- the robots.txt URL requested
	status     INTEGER NOT NULL,          -- 0 when no response arrived
	body       BLOB,                      -- the 2xx body as fetched
	fetched_at TEXT NOT NULL,
	expires_at TEXT NOT NULL,             -- fetched again after this, also by a resumed crawl
	error      TEXT,                      -- why it was unreachable
	PRIMARY KEY (crawl_id, authority)
);
CREATE TABLE IF NOT EXISTS queue (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,              -- normalized, as the frontier queued it
	host      TEXT NOT NULL,
	depth     INTEGER NOT NULL,
	from_url  TEXT NOT NULL,
	seq       INTEGER NOT NULL,           -- push order: a resumed crawl keeps the breadth-first order
	state     INTEGER NOT NULL,           -- 0 queued (or in flight), 1 done, 2 failed, 3 dropped (host stopped)
	PRIMARY KEY (crawl_id, url)
);
CREATE TABLE IF NOT EXISTS queue_hosts (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	host      TEXT NOT NULL,
	stopped   INTEGER NOT NULL DEFAULT 0, -- robots.txt of the host became unreachable: its URLs are refused
	PRIMARY KEY (crawl_id, host)
);
CREATE TABLE IF NOT EXISTS crawl_runs (
	crawl_id   INTEGER NOT NULL REFERENCES crawls(id),
	pid        INTEGER NOT NULL,          -- the process that ran (or resumed) the crawl
	host       TEXT NOT NULL,             -- on which machine
	started_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sitemap_fetches (
	crawl_id  INTEGER NOT NULL REFERENCES crawls(id),
	url       TEXT NOT NULL,              -- as listed in robots.txt or an index
	final_url TEXT,
	status    INTEGER NOT NULL,
	truncated INTEGER NOT NULL DEFAULT 0,
	body      BLOB,                       -- replayed by a resumed crawl instead of a second request
	error     TEXT,
	PRIMARY KEY (crawl_id, url)
);
