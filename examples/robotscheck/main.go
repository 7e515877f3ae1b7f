// Command robotscheck says whether a crawler may fetch URLs under a
// robots.txt, and why.
//
//	go run ./examples/robotscheck -agent TOKEN [-robots FILE_OR_URL] URL...
//
// -agent is a product token ("CrawlCove-Crawler") or a full User-Agent, from
// which the token is derived ("Mozilla/5.0 (compatible; 2-UAcomBot/1.0)" ->
// "2-UAcomBot"). -robots is a local file or the URL of a site whose
// /robots.txt is fetched; without it, each URL's own site is asked. Each URL
// is printed with its verdict, the deciding rule, its line and the group.
//
// Exit status: 0 all allowed, 1 some disallowed, 2 usage or fetch error
// (including a robots.txt that is unreachable: 5xx, 429 or network error).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("robotscheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	agent := fs.String("agent", "", "crawler product token or full User-Agent (required)")
	source := fs.String("robots", "", "robots.txt `FILE_OR_URL`; default: each URL's own /robots.txt")
	ua := fs.String("ua", "polite-robotscheck/1.0 (+https://github.com/politecrawl/polite)", "User-Agent sent when fetching robots.txt")
	timeout := fs.Duration("timeout", 15*time.Second, "time limit for each robots.txt fetch")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: robotscheck -agent TOKEN [-robots FILE_OR_URL] URL...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	if *agent == "" || fs.NArg() == 0 {
		fs.Usage()
		return exitError
	}
	token := *agent
	if strings.ContainsAny(token, " /(;") {
		token = robots.ProductToken(token)
	}
	if token == "" {
		fmt.Fprintf(stderr, "robotscheck: no product token in -agent %q\n", *agent)
		return exitError
	}

	cache := &robots.Cache{Client: &http.Client{Timeout: *timeout}, UserAgent: *ua, Recheck: -1}
	ctx := context.Background()

	// rulesFor returns the rules that apply to u and a note about where they came from.
	var fixed *robots.Rules
	var fixedNote string
	if *source != "" {
		var err error
		fixed, fixedNote, err = load(ctx, cache, *source)
		if err != nil {
			fmt.Fprintf(stderr, "robotscheck: %v\n", err)
			return exitError
		}
		if fixed.Truncated() {
			fmt.Fprintf(stderr, "robotscheck: %s is over %d bytes; the rest was ignored\n", *source, robots.MaxBodySize)
		}
	}

	code := exitAllowed
	fmt.Fprintf(stdout, "agent %s\n", token)
	if fixedNote != "" {
		fmt.Fprintln(stdout, fixedNote)
	}
	for _, u := range fs.Args() {
		var d robots.Decision
		if fixed != nil {
			d = fixed.Explain(token, u)
		} else {
			v, err := cache.Check(ctx, token, u)
			switch {
			case err != nil:
				fmt.Fprintf(stderr, "robotscheck: %v\n", err)
				code = exitError
				continue
			case v.Outcome == robots.Unreachable:
				fmt.Fprintf(stdout, "%s: unreachable: robots.txt could not be fetched, the site is off limits (%v)\n", u, v.Err)
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
		fmt.Fprintf(stdout, "%s: %s\n", u, d)
	}
	return code
}

// load reads robots.txt from a file, or fetches it from a URL's site.
func load(ctx context.Context, cache *robots.Cache, source string) (*robots.Rules, string, error) {
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
	v, err := cache.Check(ctx, "", source)
	if err != nil {
		return nil, "", err
	}
	if v.Status < 200 || v.Status > 299 {
		return r, fmt.Sprintf("no robots.txt at %s (HTTP %d): no rules, everything allowed", source, v.Status), nil
	}
	return r, "rules from " + source, nil
}
