package crawl

import (
	"errors"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/internal/urlnorm"
)

// The defaults and ranges of a crawl's settings, as the bot page promises them. The command line's flags
// and the app's form both take them from here, and both check a crawl with Check.
const (
	DefaultMaxPages    = 500
	DefaultMaxDepth    = 5
	DefaultConcurrency = 4
	DefaultGap         = 300 * time.Millisecond
	DefaultTimeout     = 15 * time.Second

	MinConcurrency, MaxConcurrency = 1, 16
	MinGap, MaxGap                 = 0, 60 * time.Second
	MaxMaxPages                    = 1_000_000 // a desktop audit; the report and the file stay usable
	MaxMaxDepth                    = 1000
	MinTimeout, MaxTimeout         = time.Millisecond, 10 * time.Minute
	// MaxRender caps the rendered pass (-render N).
	MaxRender = 500
)

// Defaults returns a Config with every setting at its default, crawling nothing yet.
func Defaults() *Config {
	return &Config{DB: "audit.db", MaxPages: DefaultMaxPages, MaxDepth: DefaultMaxDepth, Concurrency: DefaultConcurrency,
		Gap: DefaultGap, UserAgent: DefaultUserAgent, Timeout: DefaultTimeout}
}

// Check reports the first setting of c outside its range, or a user agent that cannot be sent, as a
// *store.UsageError whose message names the flag and its range ("-concurrency 20: must be from 1 to 16").
// The command line prints it and exits 2; the app shows it next to its form.
func (c *Config) Check() error {
	// A value out of its range is refused, never a crawl with a limit quietly off.
	for _, err := range []error{
		cmdline.IntIn("concurrency", c.Concurrency, MinConcurrency, MaxConcurrency),
		cmdline.DurationIn("gap", c.Gap, MinGap, MaxGap),
		cmdline.IntIn("max-pages", c.MaxPages, 1, MaxMaxPages),
		cmdline.IntIn("max-depth", c.MaxDepth, 0, MaxMaxDepth),
		cmdline.DurationIn("timeout", c.Timeout, MinTimeout, MaxTimeout),
		cmdline.IntIn("render", c.Render, 0, MaxRender),
	} {
		if err != nil {
			return store.Usagef("%s", err)
		}
	}
	if strings.TrimSpace(c.UserAgent) == "" {
		return store.Usagef("-user-agent must not be empty")
	}
	if strings.ContainsAny(c.UserAgent, "\r\n") {
		return store.Usagef("-user-agent must be a single line")
	}
	if strings.ContainsFunc(c.UserAgent, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		// net/http would refuse every request, robots.txt first, and the site would look off limits.
		return store.Usagef("-user-agent %q contains control characters", c.UserAgent)
	}
	return nil
}

// StartURL reads the address to crawl by the rule of every program of the project (urlnorm.StartURL):
// an absolute http(s) URL, or a bare host name with a dot, read as https ("shop.example" ->
// "https://shop.example/"). Anything else is a *store.UsageError saying why.
func StartURL(raw string) (string, error) {
	u, err := urlnorm.StartURL(raw)
	if err != nil {
		var ue *urlnorm.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", store.Usagef("bad URL %q: %v", raw, err)
	}
	return u, nil
}
