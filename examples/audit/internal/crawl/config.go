package crawl

import (
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/neardup"
	"github.com/politecrawl/polite/examples/audit/internal/store"
)

// Exit statuses. Scripts rely on them.
const (
	ExitOK        = 0 // the crawl finished, whatever it found
	ExitFailure   = 1 // anything else, including an interrupted (Ctrl-C) crawl
	ExitUsage     = 2 // bad flags or arguments
	ExitOffLimits = 3 // robots.txt of the start host unreachable or 5xx: the whole site is off limits
	ExitRefused   = 4 // the site refuses this crawler: 401/403 to robots.txt and to the start page
)

// The crawler's identity.
const (
	DefaultUserAgent = "CrawlCove-Crawler" // -user-agent's default: the name the public page tells site owners to match
	fallbackToken    = "CrawlCove-Crawler" // robots.txt rules for it apply whatever -user-agent says
)

// Config is the parsed command line.
type Config struct {
	DB          string            // -db: the SQLite file every crawl of this database is kept in
	MaxPages    int               // -max-pages: the crawl stops after this many pages
	MaxDepth    int               // -max-depth: clicks from the start page
	Concurrency int               // -concurrency: requests in flight at once, across hosts
	Gap         time.Duration     // -gap: the least time between two request starts to one host
	UserAgent   string            // -user-agent: sent as the header and matched against robots.txt first
	Timeout     time.Duration     // -timeout: one request, headers and body
	Resolve     map[string]string // "host:port" -> "addr:port"
	Demo        bool              // -demo: crawl the built-in demo shop
	Quiet       bool              // -quiet: no progress line
	NoReport    bool              // -no-report: no HTML report at the end
	Resume      bool              // -resume: continue an interrupted crawl (resume.go)
	Crawl       int64             // -crawl: which one; 0 = the latest
	URL         string            // the start URL, as given
	Log         string            // -log FILE: decision events as JSON lines
	Logger      *slog.Logger      // writes to Log; nil = silent
	Render      int               // -render N: pages of the rendered pass, 0 = off
	Browser     string            // the browser the rendered pass runs (resolved only when Render > 0)
	// What the benchmark script (bench/scale.sh) reads; none changes what is crawled or written.
	Timings    bool   // -timings: print how long the crawl and each pass after it took, to stderr
	CPUProfile string // -cpuprofile FILE: a pprof CPU profile of the whole run
	MemProfile string // -memprofile FILE: a pprof heap profile taken when the crawl stops, before the passes; FILE.end at exit
}

// Settings is the part of the command line the crawls row keeps, so a resume and the report see the
// limits the crawl ran with.
func (c *Config) Settings() store.Settings {
	return store.Settings{MaxPages: c.MaxPages, MaxDepth: c.MaxDepth, Concurrency: c.Concurrency, Gap: c.Gap.String(),
		Timeout: c.Timeout.String(), Resolve: c.Resolve, Demo: c.Demo, Render: c.Render, Fingerprint: neardup.Version}
}

// Env is what tests replace: where requests go, the clock, and whether stderr is a terminal.
type Env struct {
	// Transport is the base transport under the polite layers; nil = fetch.NewBaseTransport(-resolve).
	Transport http.RoundTripper
	// Now is the clock; nil = time.Now.
	Now func() time.Time
	// Terminal reports whether w is a terminal (the progress line is drawn only there); nil = isTerminal.
	Terminal func(w io.Writer) bool
	// MemoryQueue keeps the frontier's queue in memory only, as before resume existed: the crawl cannot
	// be resumed. Benchmarks compare the two.
	MemoryQueue bool
	// BeforePasses, when set, is called by Ending.Finish once the crawl's memory has been given back and
	// just before the passes over the crawl start: a test checks there that the crawler is unreachable.
	BeforePasses func()
}
