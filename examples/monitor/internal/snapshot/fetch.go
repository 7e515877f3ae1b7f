package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/textscope"
	"github.com/politecrawl/polite/fetch"
	fetchpage "github.com/politecrawl/polite/fetch/page"
)

// FromFetch turns a fetch result into a snapshot. A redirect into a path
// robots.txt disallows is a blocked snapshot: the page's content was not
// fetched because of robots.txt. A 304 to a conditional GET carries prev's
// fields over and is flagged NotModified: fetch says Unchanged only when the
// request carried validators (a 304 to one that did not confirms nothing).
func FromFetch(pageURL string, at time.Time, res *fetch.Result, err error, prev *Snapshot) *Snapshot {
	return FromFetchScoped(pageURL, at, res, err, prev, nil)
}

// wholePage is the scope of a page without rules: its whole visible text.
var wholePage, _ = textscope.Compile(textscope.Rules{})

// FromFetchScoped is FromFetch for a page whose compared text is cut by its
// rules (scope; nil: the whole page). With rules, the stored text, its hash
// and its word count are those of the selected part less the ignored
// matches, so a date, a counter or an ad outside it is no change; the SEO
// fields are the page's whatever the rules.
func FromFetchScoped(pageURL string, at time.Time, res *fetch.Result, err error, prev *Snapshot, scope *textscope.Scope) *Snapshot {
	sn := &Snapshot{PageURL: pageURL, TakenAt: at}
	var fe *fetch.Error
	if err != nil && errors.Is(err, fetch.ErrDisallowed) {
		sn.Blocked = true
		sn.RobotsRule = err.Error()
		if errors.As(err, &fe) && fe.Verdict != nil {
			sn.RobotsRule = fe.Verdict.Decision.String() + " (after redirect to " + fe.Verdict.URL + ")"
		}
		return sn
	}
	if err != nil {
		if r, refused := Refused(err); refused {
			sn.Error = fmt.Sprintf("%s: %v", pageURL, r)
		} else {
			sn.Error = err.Error()
		}
	}
	if res == nil {
		return sn
	}
	sn.Status = res.Status
	sn.FinalURL = res.FinalURL
	// The server's time for the final request, not the waits politeness
	// added (gate, retries, robots.txt).
	sn.ResponseTime = res.ResponseTime()
	for _, h := range res.Redirects {
		sn.Redirects = append(sn.Redirects, Hop{URL: h.URL, Status: h.Status, Location: h.Location})
	}
	if res.Challenge != nil {
		// Bot protection answered, not the page: nothing of the page is
		// known, so nothing is recorded to compare (fetch never retried it).
		sn.BotProtection = res.Challenge.Vendor + ", " + res.Challenge.Signal
		sn.Error = ""
		return sn
	}
	if err == nil && res.Unchanged && prev != nil {
		// Unchanged: the page is what prev saw; only the check is new.
		carried := *prev
		carried.ID, carried.TakenAt, carried.Changes = 0, at, nil
		carried.Redirects, carried.FinalURL, carried.ResponseTime = sn.Redirects, sn.FinalURL, sn.ResponseTime
		carried.NotModified, carried.BytesSaved = true, res.BytesSaved
		carried.ResetText()
		return &carried
	}
	sn.BodyBytes = int64(len(res.Body))
	if err != nil || res.Status < 200 || res.Status > 299 {
		return sn
	}
	if !noStore(res.Header) {
		// The validators the next check sends (store.Validators reads
		// them back); a response marked no-store is not to be kept.
		sn.ETag = res.Header.Get("ETag")
		sn.LastModified = res.Header.Get("Last-Modified")
	}
	sn.XRobotsTag = strings.Join(res.Header.Values("X-Robots-Tag"), ", ") // page.XRobotsTag for HTML
	pg, perr := res.Page()
	switch {
	case perr == nil:
		sn.Title = pg.Title
		sn.MetaDescription = pg.MetaDescription
		sn.Canonical = pg.Canonical
		sn.MetaRobots = pg.MetaRobots
		sn.XRobotsTag = pg.XRobotsTag
		if len(pg.H1) > 0 {
			sn.H1 = pg.H1[0]
		}
		for _, a := range pg.Hreflang {
			sn.Hreflang = append(sn.Hreflang, Alternate{Hreflang: a.Hreflang, URL: a.URL})
		}
		sn.ContentHash = pg.TextHash
		sn.WordCount = pg.WordCount
		// The text is read in the encoding fetch/page settled on (its
		// charset, BOM, <meta> and sniffing rules), so both agree.
		ct := res.ContentType
		if pg.Encoding != "" {
			ct = "text/html; charset=" + pg.Encoding
		}
		if scope == nil {
			scope = wholePage
		}
		txt, terr := scope.HTML(res.Body, ct)
		if terr != nil {
			// Nested deeper than the HTML parser goes: no text to show,
			// and the page's own hash still tells a change.
			return sn
		}
		sn.SetText(txt.Text, txt.Cut)
		if scope != wholePage {
			// The hash fetch/page computed is of the whole page: a change
			// outside the selected part must not count.
			sum := sha256.Sum256([]byte(txt.Text))
			sn.ContentHash = hex.EncodeToString(sum[:])
			sn.WordCount = len(strings.Fields(txt.Text))
		}
		return sn
	case !errors.Is(perr, fetchpage.ErrNotHTML):
		sn.Error = "parse HTML: " + perr.Error()
	}
	// Not HTML: the content hash is of the bytes themselves.
	sum := sha256.Sum256(res.Body)
	sn.ContentHash = hex.EncodeToString(sum[:])
	return sn
}

// noStore reports whether h says Cache-Control: no-store (RFC 9111
// §5.2.2.5).
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
