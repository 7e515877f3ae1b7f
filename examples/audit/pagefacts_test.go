package main

import (
	"database/sql"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/neardup"
)

// The facts the passes over the crawl compare are filled while the page is parsed: the hash of its
// visible words, their near-duplicate fingerprint (from the same pass), <html lang> and its hreflang
// alternates.
func TestPageFactsFilledAtCrawlTime(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", `<!doctype html><html lang="en-GB"><head><title>Home</title>
<link rel="alternate" hreflang="en-GB" href="/"><link rel="alternate" hreflang="de" href="http://shop.test/de/">
</head><body><h1>Tents and stoves</h1><p>Every tent we sell is tested on a wet weekend.</p><a href="/de/">de</a></body></html>`)
	s.HTML("/de/", `<html><body><p>Jedes Zelt</p></body></html>`)
	r := audit(t, e, "-gap", "0", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)

	var hash, lang, hreflang sql.NullString
	var fp []byte
	require.NoError(t, r.db.QueryRow(`SELECT text_hash, fingerprint, html_lang, hreflang FROM pages WHERE url = 'http://shop.test/'`).Scan(&hash, &fp, &lang, &hreflang))
	assert.Len(t, hash.String, 64)
	assert.Equal(t, "en-GB", lang.String)
	assert.JSONEq(t, `[{"hreflang":"en-GB","url":"http://shop.test/"},{"hreflang":"de","url":"http://shop.test/de/"}]`, hreflang.String)
	got, ok := neardup.FromBytes(fp)
	require.True(t, ok, "fingerprint of %d bytes", len(fp))
	assert.Equal(t, neardup.Of("Tents and stoves Every tent we sell is tested on a wet weekend. de"), got,
		"the fingerprint of the visible words")

	var lang2 sql.NullString
	require.NoError(t, r.db.QueryRow(`SELECT html_lang FROM pages WHERE url = 'http://shop.test/de/'`).Scan(&lang2))
	assert.False(t, lang2.Valid && lang2.String != "", "no <html lang>: nothing stored")
}

// A page reached through a redirect and also linked is one document: its own findings are written
// once, with the row that requested it, not again with the row made for the URL the redirect reached.
func TestPageFindingsOncePerDocument(t *testing.T) {
	n, e := loopNet(t)
	s := n.Add("shop.test")
	s.Robots("")
	s.HTML("/", page("Home", "/old", "/b"))
	s.Redirect("/old", "/new", http.StatusMovedPermanently) // /new unknown yet: the redirect is followed
	s.HTML("/b", page("B", "/new"))                         // and /new is named afterwards
	s.HTML("/new", page("New"))
	r := audit(t, e, "-gap", "0", "-concurrency", "1", "http://shop.test/")
	require.Equal(t, crawl.ExitOK, r.code, r)
	require.Equal(t, 1, s.Count("/new"))
	assert.Equal(t, 1, r.int(t, `SELECT COUNT(*) FROM findings WHERE url = 'http://shop.test/new' AND kind = 'viewport_missing'`))
	assert.Equal(t, 0, r.int(t, `SELECT COUNT(*) FROM (SELECT kind, url FROM findings WHERE page_check = 1 GROUP BY kind, url HAVING COUNT(*) > 1)`),
		"no page finding twice")
}
