package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/politecrawl/polite/examples/audit/internal/crawl"
	"github.com/politecrawl/polite/examples/audit/internal/findings"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The four WordPress requests: made only on a site whose HTML looks like WordPress.

var probePaths = []string{"/wp-json/", "/xmlrpc.php", "/wp-content/uploads/", "/?p=1"}

func TestWordPressProbesOnlyOnWordPress(t *testing.T) {
	t.Run("WordPress", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("User-agent: *\nDisallow: /xmlrpc.php\n")
		s.HTML("/", `<html><head><title>Blog</title><meta name="generator" content="WordPress 6.5">`+
			`<link rel="stylesheet" href="/wp-content/themes/x/style.css"></head><body><h1>Blog</h1></body></html>`)
		s.Page("/wp-json/", "application/json", `{"name":"Blog"}`)
		s.Redirect("/?p=1", "/hello-world/", http.StatusMovedPermanently)
		s.Status("/wp-content/uploads/", 403)
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		assert.Equal(t, 1, s.Count("/wp-json/"))
		assert.Equal(t, 1, s.Count("/wp-content/uploads/"))
		assert.Equal(t, 1, s.Count("/?p=1"))
		assert.Equal(t, 0, s.Count("/xmlrpc.php"), "still subject to robots.txt")
		assert.Equal(t, 0, s.Count("/hello-world/"), "a probe is one request: its redirect is recorded, not followed")
		assert.Equal(t, 0, s.Count("/wp-content/themes/x/style.css"), "assets are not crawled")
		for _, q := range s.Requests() {
			assert.Equal(t, http.MethodGet, q.Method, q.Path)
		}
		k := r.kinds(t)
		assert.Equal(t, 1, k[findings.KindWordPress])
		assert.Equal(t, 4, k[findings.KindWordPressProbe])
		assert.Contains(t, strings.Join(r.strs(t, `SELECT detail FROM findings WHERE kind = 'wordpress_probe'`), "\n"), "Location /hello-world/")
	})
	t.Run("not WordPress", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.HTML("/", page("Shop", "/a"))
		s.HTML("/a", page("A"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		for _, p := range probePaths {
			assert.Equal(t, 0, s.Count(p), p)
		}
		assert.Equal(t, 0, r.kinds(t)[findings.KindWordPressProbe])
	})
}

// WordPress is recognised from asset URLs alone (no generator meta), and only from HTML read: a link to
// some other site's /wp-content/ is not WordPress here.
func TestWordPressFromAssetsOnly(t *testing.T) {
	t.Run("wp-includes script", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.HTML("/", `<html><head><title>Shop</title><script src="/wp-includes/js/jquery/jquery.min.js"></script></head><body><h1>Shop</h1></body></html>`)
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		for _, p := range probePaths {
			assert.Equal(t, 1, s.Count(p), p)
		}
		assert.Equal(t, 1, r.kinds(t)[findings.KindWordPress])
	})
	t.Run("a link to another site's wp-content", func(t *testing.T) {
		n, e := loopNet(t)
		s := n.Add("shop.test")
		s.Robots("")
		s.HTML("/", page("Shop", "https://blog.example/wp-content/uploads/report.pdf"))
		r := audit(t, e, "-gap", "0", "http://shop.test/")
		require.Equal(t, crawl.ExitOK, r.code, r)
		for _, p := range probePaths {
			assert.Equal(t, 0, s.Count(p), p)
		}
	})
}

// A site built with another CMS gets none of the four WordPress requests: its generator meta and its own
// asset paths are not WordPress, whatever else they have in common with it (PHP, /themes/, ?p=).
func TestOtherGeneratorsGetNoWordPressProbes(t *testing.T) {
	for _, gen := range []string{"ExpressionEngine", "Drupal 10 (https://www.drupal.org)", "Joomla! - Open Source Content Management"} {
		t.Run(gen, func(t *testing.T) {
			n, e := loopNet(t)
			s := n.Add("shop.test")
			s.Robots("")
			s.HTML("/", `<!doctype html><html><head><title>Shop</title><meta name="generator" content="`+gen+`">`+
				`<link rel="stylesheet" href="/themes/ee/site/default/css/style.css"><script src="/index.php?ACT=12"></script></head>`+
				`<body><h1>Shop</h1><a href="/index.php?/blog/entry/hello">Hello</a> <a href="/?p=2">Page 2</a></body></html>`)
			s.HTML("/index.php?/blog/entry/hello", page("Hello"))
			r := audit(t, e, "-gap", "0", "http://shop.test/")
			require.Equal(t, crawl.ExitOK, r.code, r)
			for _, p := range probePaths {
				assert.Zero(t, s.Count(p), "%s requested of a %s site: %v", p, gen, s.Paths())
			}
			assert.Equal(t, 1, s.Count("/?p=2"), "a link the site itself has is crawled like any other")
			k := r.kinds(t)
			assert.Zero(t, k[findings.KindWordPress]+k[findings.KindWordPressProbe], "%v", k)
		})
	}
}
