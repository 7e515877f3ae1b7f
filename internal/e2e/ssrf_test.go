package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/politecrawl/polite/internal/testsite"
)

// The monitor's address guard is on unless -allow-private is given: every
// spelling of a loopback target is refused before connect, with exit 2,
// and the loopback server sees no request.
//
// Expected to fail until the monitor branch merges: on main newMonitor
// turns the guard off in every real build (issue 18, "Critical").

// secretSite is a loopback site whose every answer is the secret.
func secretSite(t *testing.T) *testsite.Site {
	s := testsite.New(t)
	s.NotFound(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<title>INTERNAL-SECRET</title>INTERNAL-SECRET"))
	})
	return s
}

// v6Secret is a server on [::1], counting requests; nil without IPv6.
func v6Secret(t *testing.T) (string, *atomic.Int64) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return "", nil
	}
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = w.Write([]byte("INTERNAL-SECRET"))
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), &n
}

func TestMonitorSSRFGuardOnByDefault(t *testing.T) {
	t.Parallel()
	s := secretSite(t)
	_, port, _ := net.SplitHostPort(s.Addr())
	targets := []string{
		"http://127.0.0.1:" + port + "/secret",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://[::ffff:7f00:1]:" + port + "/",
		"http://0.0.0.0:" + port + "/",
		"http://localhost:" + port + "/",
		"http://LOCALHOST:" + port + "/",
		"http://localhost.:" + port + "/",
		"http://①②⑦.⓪.⓪.①:" + port + "/",
		"http://ⅼocalhost:" + port + "/",
		"http://127。0。0。1:" + port + "/",
	}
	for _, u := range targets {
		for _, cmd := range []string{"check", "track"} {
			t.Run(cmd+" "+u, func(t *testing.T) {
				t.Parallel()
				args := []string{cmd, u}
				if cmd == "track" {
					args = []string{cmd, "-db", "m.db", u}
				}
				r := run(t, "monitor", opts{}, args...)
				assert.Equal(t, 2, r.code, r)
				assert.Regexp(t, refusedOrBad, r.out())
				assert.NotContains(t, r.out(), "INTERNAL-SECRET")
			})
		}
	}
	t.Run("check a -resolve name mapped to loopback", func(t *testing.T) {
		t.Parallel()
		r := run(t, "monitor", opts{}, "check", "-resolve", "secret.example:80:"+s.Addr(), "http://secret.example/")
		assert.Equal(t, 2, r.code, r)
		assert.Regexp(t, refusal, r.out())
	})
	t.Run("track+run a -resolve name mapped to loopback", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		res := []string{"-resolve", "secret.example:80:" + s.Addr()}
		r := run(t, "monitor", opts{dir: dir}, append(append([]string{"track", "-db", "m.db"}, res...), "http://secret.example/")...)
		assert.Equal(t, 2, r.code, r)
		r = run(t, "monitor", opts{dir: dir}, append([]string{"run", "-db", "m.db"}, res...)...)
		assert.NotContains(t, r.stdout, "ok      http://secret.example/", "nothing internal in a snapshot")
	})
	if port6, n6 := v6Secret(t); n6 != nil {
		t.Run("check [::1]", func(t *testing.T) {
			r := run(t, "monitor", opts{}, "check", "http://[::1]:"+port6+"/")
			assert.Equal(t, 2, r.code, r)
			assert.Regexp(t, refusal, r.out())
			assert.Zero(t, n6.Load(), "the [::1] server saw no request")
		})
	}
	// The free tool and the track form of serve, without -allow-private.
	t.Run("serve", func(t *testing.T) {
		t.Parallel()
		srv := startServe(t, t.TempDir(), "-db", "m.db")
		resp, body := postForm(t, srv.base+"/api/check", url.Values{"url": {"http://127.0.0.1:" + port + "/secret"}}, nil)
		var card struct {
			Error string `json:"error"`
			Title string `json:"title"`
		}
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.Unmarshal([]byte(body), &card), body)
			assert.Regexp(t, refusal, card.Error)
		} else {
			assert.Regexp(t, refusal, body)
		}
		assert.NotContains(t, body, "INTERNAL-SECRET")
		resp, body = postForm(t, srv.base+"/check", url.Values{"url": {"http://localhost:" + port + "/"}}, nil)
		assert.NotContains(t, body, "INTERNAL-SECRET", "the card: %d", resp.StatusCode)
		assert.Regexp(t, `(?i)refused`, body, "the card explains the refusal")
		_, _ = postForm(t, srv.base+"/track", url.Values{"url": {"http://127.0.0.1:" + port + "/"}, "interval": {"6h"}}, nil)
		_, body = get(t, srv.base+"/api/pages", nil)
		assert.Contains(t, body, `"total": 0`, "nothing internal tracked from the form")
	})
	t.Cleanup(func() {
		// After every subtest: the loopback site was never asked.
		assert.Zero(t, s.Total(), "the loopback site saw requests: %v", paths(s.Requests()))
	})
}
