package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/politecrawl/polite/examples/internal/cmdline"
	"github.com/politecrawl/polite/examples/monitor/internal/schedule"
	"github.com/politecrawl/polite/examples/monitor/internal/snapshot"
	"github.com/politecrawl/polite/examples/monitor/internal/store"
	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
)

// What is compared: a page's rules (-select, -exclude, -ignore) cut the
// text its snapshots store, hash and diff to part of the page
// (textscope). `track` sets them when one of the flags is given (and keeps
// a tracked page's rules otherwise); `rules` shows, replaces or clears them.

// ruleFlags are the rule flags of track and rules.
type ruleFlags struct {
	fs      *flag.FlagSet
	sel     string
	exclude string
	ignore  ignoreList
	clear   bool
	set     bool // a rule flag was given
}

// ignoreList collects repeated -ignore flags.
type ignoreList []string

func (l *ignoreList) String() string { return strings.Join(*l, " ") }

func (l *ignoreList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func (r *ruleFlags) add(fs *flag.FlagSet, clearFlag bool) {
	r.fs = fs
	fs.StringVar(&r.sel, "select", "", "CSS selector of the part of the page compared (default: the whole visible text)")
	fs.StringVar(&r.exclude, "exclude", "", "CSS selector of elements left out of the comparison (ads, widgets)")
	fs.Var(&r.ignore, "ignore", "RE2 regular expression whose matches are dropped from the compared text (repeatable: dates, counters)")
	if clearFlag {
		fs.BoolVar(&r.clear, "clear", false, "remove the page's rules: compare the whole visible text again")
	}
}

func (r *ruleFlags) rules() textscope.Rules {
	return textscope.Rules{Selector: r.sel, Exclude: r.exclude, Ignore: r.ignore}
}

// check validates the parsed flags up front: a bad selector or pattern, or
// one over textscope's caps, is a usage error before anything is written.
func (r *ruleFlags) check() error {
	if r.fs == nil {
		return nil
	}
	r.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "select", "exclude", "ignore":
			r.set = true
		}
	})
	if r.clear && r.set {
		return errors.New("-clear takes no -select, -exclude or -ignore")
	}
	_, err := textscope.Compile(r.rules())
	return err
}

// store gives the tracked urls the flags' rules, if any was given.
func (r *ruleFlags) store(ctx context.Context, st *store.Store, urls []string, w io.Writer) error {
	if !r.set {
		return nil
	}
	for _, u := range urls {
		if _, err := st.SetRules(ctx, u, r.rules()); err != nil {
			return err
		}
		fmt.Fprintf(w, "rules of %s: %s\n", u, rulesText(r.rules()))
	}
	return nil
}

// command is `monitor rules`: with no flag it prints the page's rules;
// with rule flags it replaces them; -clear removes them.
func (r *ruleFlags) command(ctx context.Context, st *store.Store, u string, w io.Writer) error {
	if r.set || r.clear {
		found, err := st.SetRules(ctx, u, r.rules())
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("not tracked: %s", u)
		}
	} else if _, ok, err := st.Page(ctx, u); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("not tracked: %s", u)
	}
	rules, err := st.Rules(ctx, u)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "rules of %s: %s\n", u, rulesText(rules))
	return nil
}

// rulesText writes rules on one line, terminal-safe.
func rulesText(r textscope.Rules) string {
	var parts []string
	if r.Selector != "" {
		parts = append(parts, "select "+strconv.Quote(r.Selector))
	}
	if r.Exclude != "" {
		parts = append(parts, "exclude "+strconv.Quote(r.Exclude))
	}
	for _, p := range r.Ignore {
		parts = append(parts, "ignore "+strconv.Quote(p))
	}
	if len(parts) == 0 {
		return "none (the whole visible text is compared)"
	}
	return cmdline.Safe(strings.Join(parts, ", "))
}

// maxCatchUp bounds -catch-up from above: maxParallel hosts at one request
// a second is 15,360 a minute, the most one process can start; more is a
// typo. A million pages every six hours need 2,760 a minute once they are
// a backlog.
const maxCatchUp = maxParallel * 60

// checkCatchUp checks -catch-up; benchmarks (env.anyCatchUp) may lift the
// ceiling.
func checkCatchUp(o *options, e env) error {
	if o.catchUp < 1 || (o.catchUp > maxCatchUp && !e.anyCatchUp) || o.catchUp != o.catchUp {
		return usagef("-catch-up must be between 1 and %d checks a minute, got %g", maxCatchUp, o.catchUp)
	}
	return nil
}

// refusedError is a check now refused for now: exit status 3.
type refusedError struct{ err *schedule.NowRefused }

func (e *refusedError) Error() string { return e.err.Error() }

// runNow is `monitor run -now URL`: one snapshot of a tracked page, now.
func (m *monitor) runNow(ctx context.Context, raw string, w io.Writer) error {
	u, err := canonicalURL(raw)
	if err != nil {
		return &usageError{"-now: " + err.Error()}
	}
	_, line, err := m.runner().RunNow(ctx, u)
	if line != "" {
		fmt.Fprintln(w, cmdline.Safe(line))
	}
	var refused *schedule.NowRefused
	if errors.As(err, &refused) {
		return &refusedError{refused}
	}
	if err != nil {
		return err
	}
	if p, ok, err := m.st.Page(ctx, u); err == nil && ok {
		fmt.Fprintf(w, "next scheduled check of %s at %s\n", u, snapshot.When(p.Due()))
	}
	return nil
}
