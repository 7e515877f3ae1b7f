// Command robotscheck says whether a crawler may fetch URLs under a
// robots.txt, and why.
//
//	go run ./examples/robotscheck -agent TOKEN [-agent FALLBACK]... [-robots FILE_OR_URL] URL...
//
// -agent is a product token ("CrawlCove-Crawler") or a full User-Agent, from
// which the token is derived ("Mozilla/5.0 (compatible; 2-UAcomBot/1.0)" ->
// "2-UAcomBot"). Repeat it for a crawler that answers to several tokens, in
// order of preference: the first one robots.txt names decides, and the `*`
// groups apply only when none is named. -robots is a local file or the URL
// of a site whose /robots.txt is fetched; without it, each URL's own site is
// asked. Each URL is printed with its verdict, the deciding rule, its line,
// the group and the token that matched. The manual is README.md.
//
// Exit status: 0 all allowed (or -h), 1 some disallowed, 2 usage or fetch
// error (including a robots.txt that is unreachable: 5xx, 429 or network
// error).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/politecrawl/polite/examples/internal/cmdline"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/politecrawl/polite/robots"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const (
	exitAllowed    = 0
	exitDisallowed = 1
	exitError      = 2
)

// agents collects the repeatable -agent flag.
type agents []string

func (a *agents) String() string { return strings.Join(*a, ", ") }

func (a *agents) Set(v string) error {
	*a = append(*a, v)
	return nil
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("robotscheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var agentFlags agents
	fs.Var(&agentFlags, "agent", "crawler product `token` or full User-Agent (required; repeat for fallback tokens, first preferred)")
	source := fs.String("robots", "", "robots.txt `FILE_OR_URL`; default: each URL's own /robots.txt")
	ua := fs.String("ua", "polite-robotscheck/1.0 (+https://github.com/politecrawl/polite)", "User-Agent sent when fetching robots.txt")
	timeout := fs.Duration("timeout", 15*time.Second, "time limit for each robots.txt fetch")
	logFile := fs.String("log", "", "append the robots.txt fetches and decisions to `FILE` as JSON lines")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: robotscheck -agent TOKEN [-agent FALLBACK]... [-robots FILE_OR_URL] URL...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitAllowed
		}
		return exitError
	}
	// Say what is missing before the usage, so the line a person reads
	// first names the mistake.
	switch {
	case len(agentFlags) == 0:
		fmt.Fprintln(stderr, "robotscheck: -agent is required: the crawler's product token or User-Agent (-agent CrawlCove-Crawler)")
		fs.Usage()
		return exitError
	case fs.NArg() == 0:
		fmt.Fprintln(stderr, "robotscheck: at least one URL is required")
		fs.Usage()
		return exitError
	}
	if err := cmdline.DurationIn("timeout", *timeout, time.Millisecond, 10*time.Minute); err != nil {
		fmt.Fprintf(stderr, "robotscheck: %v\n", err)
		return exitError
	}
	tokens, err := productTokens(agentFlags)
	if err != nil {
		fmt.Fprintf(stderr, "robotscheck: %v\n", err)
		return exitError
	}

	cache := &robots.Cache{Client: &http.Client{Timeout: *timeout}, UserAgent: *ua, Recheck: -1}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "robotscheck: %v\n", err)
			return exitError
		}
		defer f.Close()
		cache.Logger = slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx := context.Background()

	var fixed *robots.Rules
	var fixedNote string
	if *source != "" {
		var err error
		fixed, fixedNote, err = load(ctx, cache, tokens, *source)
		if err != nil {
			fmt.Fprintf(stderr, "robotscheck: %v\n", err)
			return exitError
		}
		if fixed.Truncated() {
			fmt.Fprintf(stderr, "robotscheck: %s is over %d bytes; the rest was ignored\n", *source, robots.MaxBodySize)
		}
	}

	code := exitAllowed
	if len(tokens) == 1 {
		fmt.Fprintf(stdout, "agent %s\n", tokens[0])
	} else {
		fmt.Fprintf(stdout, "agent %s (in order of preference)\n", strings.Join(tokens, ", "))
	}
	if fixedNote != "" {
		fmt.Fprintln(stdout, fixedNote)
	}
	for _, u := range fs.Args() {
		var d robots.Decision
		if fixed != nil {
			d = fixed.ExplainAs(tokens, u)
		} else {
			v, err := cache.CheckAs(ctx, tokens, u)
			if err != nil {
				fmt.Fprintf(stderr, "robotscheck: %s\n", cmdline.Safe(err.Error()))
				code = exitError
				continue
			}
			switch v.Outcome {
			case robots.Allowed, robots.Disallowed:
			case robots.Unreachable:
				fmt.Fprintf(stdout, "%s: unreachable: robots.txt could not be fetched, the site is off limits (%s)\n", cmdline.Safe(u), cmdline.Safe(fmt.Sprint(v.Err)))
				code = exitError
				continue
			default: // fail closed on anything else
				fmt.Fprintf(stderr, "robotscheck: %s\n", cmdline.Safe(v.String()))
				code = exitError
				continue
			}
			d = v.Decision
			if v.Status < 200 || v.Status > 299 {
				fmt.Fprintf(stdout, "%s: allowed: no robots.txt (HTTP %d), no rules\n", u, v.Status)
				continue
			}
		}
		if !d.Allowed && code == exitAllowed {
			code = exitDisallowed
		}
		// The rule is a robots.txt line as the site wrote it: made safe so it
		// cannot drive the terminal.
		fmt.Fprintf(stdout, "%s: %s%s\n", cmdline.Safe(u), cmdline.Safe(d.String()), cmdline.Safe(matched(d)))
	}
	return code
}

// productTokens turns the -agent values into product tokens, in order,
// without repeats: a full User-Agent gives its token.
func productTokens(values []string) ([]string, error) {
	var toks []string
	for _, a := range values {
		tok := a
		if strings.ContainsAny(tok, " /(;") {
			tok = robots.ProductToken(tok)
		}
		if len(robots.Tokens("", tok)) == 0 {
			return nil, fmt.Errorf("no product token in -agent %q", a)
		}
		toks = append(toks, tok)
	}
	return robots.Tokens("", toks...), nil
}

// matched says which token chose the group: one of the crawler's, `*`, or
// nothing when no group applied.
func matched(d robots.Decision) string {
	switch {
	case d.Token != "":
		return " [token " + d.Token + "]"
	case d.Wildcard:
		return " [token *]"
	}
	return ""
}

// load reads robots.txt from a file, or fetches it from a URL's site.
func load(ctx context.Context, cache *robots.Cache, tokens []string, source string) (*robots.Rules, string, error) {
	if !strings.HasPrefix(source, "http://") && !strings.HasPrefix(source, "https://") {
		f, err := os.Open(source)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		body, err := io.ReadAll(io.LimitReader(f, robots.MaxBodySize+1))
		if err != nil {
			return nil, "", fmt.Errorf("reading %s: %w", source, err)
		}
		return robots.Parse(body), "rules from " + source, nil
	}
	r, err := cache.Rules(ctx, source)
	if err != nil {
		if errors.Is(err, robots.ErrUnreachable) {
			return nil, "", fmt.Errorf("%w: the site is off limits", err)
		}
		return nil, "", err
	}
	v, err := cache.CheckAs(ctx, tokens, source) // cached: for the status

	if err != nil {
		return nil, "", err
	}
	if v.Status < 200 || v.Status > 299 {
		return r, fmt.Sprintf("no robots.txt at %s (HTTP %d): no rules, everything allowed", source, v.Status), nil
	}
	return r, "rules from " + source, nil
}
