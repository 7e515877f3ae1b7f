-- The schema of the audit database before the interned layout (layout 1, main at 3818165): the file
-- TestMigrateLayout1 makes and migrates.
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
	text_hash         TEXT,               -- hex SHA-256 of the visible words: equal for exact duplicates
	fingerprint       BLOB,               -- MinHash of the visible text's word shingles (neardup.Fingerprint), for near-duplicates
	html_lang         TEXT,               -- <html lang> as written
	hreflang          TEXT,               -- JSON [{"hreflang","url"}...]: the page's rel=alternate hreflang annotations
	link_score        INTEGER,            -- 0-100: internal PageRank over the crawl's links, written by the pass after the crawl
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
	detail    TEXT NOT NULL,
	page_check INTEGER NOT NULL DEFAULT 0 -- 1: from the page's own response, written with the page during the crawl;
	                                      -- 0: from the passes over the whole crawl, rewritten after it
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

