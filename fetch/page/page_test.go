package page

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/htmlx"
)

func urls(p *Page) []string {
	var out []string
	for _, l := range p.Links {
		out = append(out, l.URL)
	}
	return out
}

// fullPage sets every field htmlx extracts.
const fullPage = `<!doctype html><html lang="en-GB"><head><meta charset="windows-1252">
<title>Caf` + "\xe9" + ` | Shop</title><meta name="description" content="Coffee."><meta name="robots" content="noindex">
<meta name="generator" content="WordPress 6.4"><link rel="canonical" href="/c"><base href="/base/">
<link rel="alternate" hreflang="de" href="/de/"><meta http-equiv="refresh" content="5; url=/next"></head>
<body><h1>Caf` + "\xe9" + `</h1><p>Some words.</p><a href="x" rel="nofollow">X</a><a href="%zz">bad</a><a href=/1>1</a><a href=/2>2</a></body>`

// Every field of the implementation reaches the public Page unchanged.
func TestPageCarriesEveryField(t *testing.T) {
	const pageURL = "https://s.example/dir/p"
	opt := Options{MaxLinks: 5, MaxBytes: int64(len(fullPage) - 3)} // cut inside </body>
	p, err := opt.Parse(strings.NewReader(fullPage), pageURL)
	require.NoError(t, err)
	u, err := parsePageURL(pageURL)
	require.NoError(t, err)
	h, err := htmlx.Options{MaxLinks: opt.MaxLinks, MaxBytes: opt.MaxBytes}.Parse(strings.NewReader(fullPage), u)
	require.NoError(t, err)

	pv, hv := reflect.ValueOf(*p), reflect.ValueOf(*h)
	for i := 0; i < hv.NumField(); i++ {
		f := hv.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		got := pv.FieldByName(f.Name)
		require.True(t, got.IsValid(), "page.Page has no field %s", f.Name)
		require.False(t, hv.Field(i).IsZero(), "the test page leaves htmlx.Page.%s empty", f.Name)
		switch f.Name {
		case "Links", "Hreflang":
			require.Equal(t, hv.Field(i).Len(), got.Len(), f.Name)
			for j := 0; j < got.Len(); j++ {
				require.Equal(t, fieldsOf(hv.Field(i).Index(j)), fieldsOf(got.Index(j)), f.Name)
			}
		default:
			require.Equal(t, hv.Field(i).Interface(), got.Interface(), f.Name)
		}
	}
	assert.Equal(t, pageURL, p.URL)
	assert.Equal(t, "Café | Shop", p.Title)
	assert.Equal(t, 1, p.InvalidLinks)
}

func fieldsOf(v reflect.Value) []any {
	var out []any
	for i := 0; i < v.NumField(); i++ {
		out = append(out, v.Field(i).Interface())
	}
	return out
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{"/relative", "mailto:a@b.example", "https://", "ftp://h.example/", "http://%zz/", "https:opaque"} {
		p, err := Parse(strings.NewReader("<title>t</title>"), bad)
		assert.Nil(t, p, bad)
		require.ErrorIs(t, err, ErrPageURL, bad)
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, bad, e.URL)
	}

	// Without a page URL only absolute links are kept.
	p, err := Parse(strings.NewReader(`<a href="/rel">r</a><a href="https://abs.example/">a</a>`), "")
	require.NoError(t, err)
	assert.Equal(t, []string{"https://abs.example/"}, urls(p))
	assert.Equal(t, 1, p.InvalidLinks)

	// A read error: the page read so far, and both reasons for errors.Is.
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("<title>Partial</title><a href=/a>a</a>"), iotest.ErrReader(boom))
	p, err = Parse(r, "https://s.example/x")
	require.ErrorIs(t, err, ErrRead)
	require.ErrorIs(t, err, boom)
	assert.Equal(t, `page: reading the page failed: connection reset ("https://s.example/x")`, err.Error())
	require.NotNil(t, p)
	assert.Equal(t, "Partial", p.Title)
	assert.Equal(t, []string{"https://s.example/a"}, urls(p))
}

func TestOptionsBoundTheWork(t *testing.T) {
	doc := "<title>" + strings.Repeat("é", 100) + "</title>" + strings.Repeat(`<a href="/p">p</a>`, 30) + "<p>" + strings.Repeat("word ", 1000)
	p, err := Options{MaxLinks: 10, MaxTextBytes: 11, MaxBytes: 1000}.Parse(strings.NewReader(doc), "https://s.example/")
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("é", 5), p.Title)
	assert.Len(t, p.Links, 10)
	assert.Positive(t, p.LinksDropped)
	assert.True(t, p.Truncated)
}
