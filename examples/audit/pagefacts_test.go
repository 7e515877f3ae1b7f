package main

import (
	"database/sql"
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
