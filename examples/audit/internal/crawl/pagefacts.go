package crawl

import (
	"bytes"
	"fmt"
	"net/url"

	"github.com/politecrawl/polite/examples/audit/internal/neardup"
	"github.com/politecrawl/polite/examples/audit/internal/store"
	"github.com/politecrawl/polite/fetch"
	"github.com/politecrawl/polite/internal/htmlx"
)

// readPage parses a fetched HTML page in one pass, as fetch.Result.Page does, and also streams its
// visible words into a near-duplicate fingerprint and collects the facts the page checks read
// (htmlx.Options). The audit reads htmlx directly because those facts are the audit's, not
// the public page API's.
func readPage(res *fetch.Result) (*htmlx.Page, neardup.Fingerprint, error) {
	var h neardup.Hasher
	u, err := url.Parse(res.FinalURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, h.Sum(), fmt.Errorf("page URL %q is not an absolute http(s) URL", res.FinalURL)
	}
	pg, err := htmlx.Options{MaxBytes: int64(len(res.Body)), ContentType: res.ContentType, Text: &h, Facts: true}.
		Parse(bytes.NewReader(res.Body), u)
	if pg != nil {
		pg.Truncated = pg.Truncated || res.Truncated
	}
	return pg, h.Sum(), err
}

// pageFacts copies what the passes over the whole crawl compare between pages into the row.
func pageFacts(p *store.PageRecord, pg *htmlx.Page, fp neardup.Fingerprint) {
	p.TextHash, p.Lang = pg.TextHash, pg.Lang
	p.Fingerprint = fp.Bytes()
	for _, a := range pg.Hreflang {
		p.Hreflang = append(p.Hreflang, store.HreflangRecord{Hreflang: a.Hreflang, URL: a.URL})
	}
}

// notFoundFacts fingerprints the text of a 404 page (nothing else of it is kept: it is not a page of the
// site), so the soft 404 pass can compare the site's 200 pages with its real error page without a
// request of its own.
func notFoundFacts(p *store.PageRecord, res *fetch.Result) {
	if pg, fp, err := readPage(res); pg != nil && err == nil {
		p.Fingerprint, p.TextHash = fp.Bytes(), pg.TextHash
	}
}
