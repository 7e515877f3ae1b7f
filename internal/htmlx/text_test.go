package htmlx

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptionsTextStreamsTheVisibleWords(t *testing.T) {
	doc := `<html><head><title>Not text</title><script>var x = "no";</script></head>
<body><h1>Big  news</h1><p>First<b>word</b> and <a href="/x">a link</a></p><div>next</div>
<template>inert</template><noscript>hidden</noscript><svg><title>t</title></svg></body></html>`
	var buf bytes.Buffer
	p, err := Options{Text: &buf}.Parse(strings.NewReader(doc), nil)
	require.NoError(t, err)
	assert.Equal(t, "Big news Firstword and a link next", buf.String())
	sum := sha256.Sum256(buf.Bytes())
	assert.Equal(t, hex.EncodeToString(sum[:]), p.TextHash, "the writer gets the bytes TextHash is computed over")
	assert.Equal(t, len(strings.Fields(buf.String())), p.WordCount)

	// The bench page, read in small pieces: the same text arrives, across many writes.
	big := benchPage()
	var w1, w2 bytes.Buffer
	p1, err := Options{Text: &w1}.Parse(bytes.NewReader(big), nil)
	require.NoError(t, err)
	p2, err := Options{Text: &w2, keepText: true}.Parse(&dribble{r: bytes.NewReader(big)}, nil)
	require.NoError(t, err)
	assert.Equal(t, w1.String(), w2.String())
	assert.Equal(t, string(p2.text), w2.String())
	assert.Equal(t, p1.TextHash, p2.TextHash)
}

func TestOptionsTextWriteErrorIsReturned(t *testing.T) {
	boom := errors.New("disk full")
	u, _ := url.Parse("https://x.example/p")
	p, err := Options{Text: failWriter{boom}}.Parse(strings.NewReader(`<title>T</title><p>some words</p><a href=/a>a</a>`), u)
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "https://x.example/p")
	require.NotNil(t, p)
	assert.Equal(t, "T", p.Title, "parsing goes on after the writer fails")
	assert.Len(t, p.Links, 1)
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// dribble returns at most 7 bytes per Read.
type dribble struct{ r io.Reader }

func (d *dribble) Read(b []byte) (int, error) {
	if len(b) > 7 {
		b = b[:7]
	}
	return d.r.Read(b)
}
