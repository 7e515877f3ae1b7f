package alert

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politecrawl/polite/fetch"
)

var loopback = Net{AllowLoopback: true}

// sample is a message about a page that got a noindex and a new title.
func sample() *Message {
	return &Message{
		ID: "change-42", Monitor: "2-UAcomBot monitor", PageURL: "https://shop.example/pricing",
		HistoryURL: "http://127.0.0.1:8080/page?url=https%3A%2F%2Fshop.example%2Fpricing",
		TakenAt:    time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Severity: "critical",
		Changes: []Change{
			{Kind: "noindex_added", Severity: "critical", Field: "meta_robots", Old: `meta robots "index"`, New: `meta robots "noindex"`},
			{Kind: "title", Severity: "medium", Field: "title", Old: "Pricing", New: "Pricing <b>plans</b> & more\r\nBcc: evil@example.com"},
		},
		DiffLines: []string{"Plans start at [-ten-]{+twelve+} euros", "a [-month.-]{+month, billed yearly.+}"},
	}
}

// receiver is a loopback webhook endpoint that checks the signature the
// way a receiver's own code would (not with Verify) and records deliveries.
type receiver struct {
	secret   []byte
	requests atomic.Int32
	conns    atomic.Int32
	bodies   chan []byte
	headers  chan http.Header
	answer   func(w http.ResponseWriter, n int32)
}

func newReceiver(t *testing.T, secret string, answer func(w http.ResponseWriter, n int32)) (*receiver, *httptest.Server) {
	r := &receiver{secret: []byte(secret), bodies: make(chan []byte, 100), headers: make(chan http.Header, 100), answer: answer}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := r.requests.Add(1)
		body, _ := io.ReadAll(req.Body)
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		if len(r.secret) > 0 {
			mac := hmac.New(sha256.New, r.secret)
			mac.Write([]byte(req.Header.Get("X-Polite-Timestamp") + "." + string(body)))
			want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
			if !hmac.Equal([]byte(want), []byte(req.Header.Get("X-Polite-Signature"))) {
				http.Error(w, "bad signature", http.StatusUnauthorized)
				return
			}
		}
		r.bodies <- body
		r.headers <- req.Header.Clone()
		if r.answer != nil {
			r.answer(w, n)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return r, srv
}

func TestWebhookDeliversSignedJSON(t *testing.T) {
	r, srv := newReceiver(t, "s3cret", nil)
	now := time.Unix(1_764_590_400, 0)
	w := &Webhook{URL: srv.URL + "/hook", Secret: []byte("s3cret"), Net: loopback, Now: func() time.Time { return now }}
	if err := w.Send(context.Background(), "change-42/7", sample()); err != nil {
		t.Fatal(err)
	}
	body, h := <-r.bodies, <-r.headers
	var got Message
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "change-42" || got.PageURL != "https://shop.example/pricing" || len(got.Changes) != 2 ||
		got.Changes[0].Kind != "noindex_added" || got.Changes[1].Old != "Pricing" || len(got.DiffLines) != 2 || !strings.HasPrefix(got.HistoryURL, "http://127.0.0.1:8080/page?url=") {
		t.Fatalf("body %s", body)
	}
	if h.Get("Idempotency-Key") != "change-42/7" || h.Get("X-Polite-Timestamp") != "1764590400" || h.Get("User-Agent") != "polite-alert/1.0" {
		t.Fatalf("headers %v", h)
	}
	if err := Verify([]byte("s3cret"), h, body, now.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	for _, bad := range []struct {
		secret string
		body   string
		at     time.Time
	}{{"other", string(body), now}, {"s3cret", string(body) + " ", now}, {"s3cret", string(body), now.Add(10 * time.Minute)}} {
		if err := Verify([]byte(bad.secret), h, []byte(bad.body), bad.at, 5*time.Minute); !errors.Is(err, ErrBadSignature) {
			t.Errorf("Verify(%q, …, %v) = %v", bad.secret, bad.at, err)
		}
	}
	// A wrong secret is refused by the receiver: a 401, permanent.
	w.Secret = []byte("wrong")
	if err := w.Send(context.Background(), "k", sample()); !IsPermanent(err) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong secret: %v", err)
	}
}

func TestHTTPStatusesRetryOrFail(t *testing.T) {
	for _, tc := range []struct {
		status     int
		header     string
		permanent  bool
		retryAfter time.Duration
	}{
		{500, "", false, 0},
		{502, "", false, 0},
		{408, "", false, 0},
		{429, "120", false, 120 * time.Second},
		{503, "7", false, 7 * time.Second},
		{400, "", true, 0},
		{404, "", true, 0},
		{410, "", true, 0},
		{301, "", true, 0}, // a redirect is not followed
	} {
		_, srv := newReceiver(t, "", func(w http.ResponseWriter, _ int32) {
			if tc.header != "" {
				w.Header().Set("Retry-After", tc.header)
			}
			w.Header().Set("Location", "http://10.0.0.1/")
			w.WriteHeader(tc.status)
			io.WriteString(w, "nope\nsecond line")
		})
		err := (&Webhook{URL: srv.URL, Net: loopback}).Send(context.Background(), "k", sample())
		var se *StatusError
		if !errors.As(err, &se) || se.Status != tc.status || se.Body != "nope second line" || IsPermanent(err) != tc.permanent {
			t.Errorf("%d: %v (permanent %v)", tc.status, err, IsPermanent(err))
		}
		var ra *RetryAfterError
		if got := errors.As(err, &ra); got != (tc.retryAfter > 0) || (got && ra.After != tc.retryAfter) {
			t.Errorf("%d: retry after %v", tc.status, err)
		}
	}
}

func TestWebhookTimeoutAndCappedResponse(t *testing.T) {
	release := make(chan struct{})
	_, slow := newReceiver(t, "", func(w http.ResponseWriter, _ int32) { <-release })
	defer close(release)
	err := (&Webhook{URL: slow.URL, Net: loopback, Timeout: 200 * time.Millisecond}).Send(context.Background(), "k", sample())
	if !errors.Is(err, context.DeadlineExceeded) || IsPermanent(err) {
		t.Fatalf("hanging receiver: %v", err)
	}
	// A receiver that answers 200 with an endless body: the read is
	// capped and the send succeeds.
	var written atomic.Int64
	_, big := newReceiver(t, "", func(w http.ResponseWriter, _ int32) {
		chunk := []byte(strings.Repeat("x", 32<<10))
		for range 1000 {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	if err := (&Webhook{URL: big.URL, Net: loopback}).Send(context.Background(), "k", sample()); err != nil {
		t.Fatal(err)
	}
	big.Close() // waits for the handler: the client stopped reading
	if w := written.Load(); w >= 1000*32<<10 {
		t.Fatalf("the whole %d-byte body was read", w)
	}
	// And an error body is shown capped.
	_, bad := newReceiver(t, "", func(w http.ResponseWriter, _ int32) {
		w.WriteHeader(500)
		io.WriteString(w, strings.Repeat("e", 1<<20))
	})
	err = (&Webhook{URL: bad.URL, Net: loopback}).Send(context.Background(), "k", sample())
	if err == nil || len(err.Error()) > 400 {
		t.Fatalf("error of %d bytes", len(err.Error()))
	}
}

func TestDefaultNetRefusesLoopbackBeforeConnect(t *testing.T) {
	r, srv := newReceiver(t, "", nil)
	err := (&Webhook{URL: srv.URL}).Send(context.Background(), "k", sample())
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.HasPrefix(refused.Reason, "a loopback address") || !IsPermanent(err) {
		t.Fatalf("default net to loopback: %v", err)
	}
	if n := r.conns.Load(); n != 0 {
		t.Fatalf("the receiver saw %d connections", n)
	}
	// A caller's client is used as is (the monitor's guard decides).
	if err := (&Webhook{URL: srv.URL, Net: Net{HTTPClient: srv.Client()}}).Send(context.Background(), "k", sample()); err != nil {
		t.Fatal(err)
	}
	// So is a caller's dialer.
	var dialed atomic.Int32
	n := Net{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	if err := (&Webhook{URL: srv.URL, Net: n}).Send(context.Background(), "k", sample()); err != nil || dialed.Load() != 1 {
		t.Fatalf("caller's dialer: %v, %d dials", err, dialed.Load())
	}
}

func TestCheckAddr(t *testing.T) {
	// The reasons are fetch.InternalReason's: the classification lives
	// in the library, checked here through the alert's dialer.
	for addr, want := range map[string]string{
		"127.0.0.1:80": "a loopback address", "[::1]:80": "a loopback address", "10.1.2.3:25": "a private address", "192.168.0.1:25": "a private address",
		"172.16.0.1:443": "a private address", "[fd00::1]:443": "a unique local address", "169.254.169.254:80": "a link-local address", "[fe80::1]:80": "a link-local address",
		"100.64.0.1:80": "a carrier-grade NAT address", "0.0.0.0:80": "an unspecified address", "[::]:80": "an unspecified address", "239.1.2.3:80": "a multicast address",
		"[::ffff:10.0.0.1]:80": "a private address", "[64:ff9b::a00:1]:80": "a private address (10.0.0.0/8), as 64:ff9b::a00:1", "240.0.0.1:80": "a reserved address", "255.255.255.255:80": "the broadcast address",
		"93.184.215.14:443": "", "[2606:4700::1111]:443": "", "8.8.8.8:25": "",
	} {
		err := checkAddr(addr, false)
		var r *RefusedError
		if got := ""; errors.As(err, &r) {
			got = r.Reason
			if !strings.HasPrefix(got, want) || want == "" {
				t.Errorf("%s: refused as %q, want %q", addr, got, want)
			}
			if !errors.Is(err, fetch.ErrForbiddenAddress) {
				t.Errorf("%s: %v is not fetch.ErrForbiddenAddress", addr, err)
			}
		} else if want != "" {
			t.Errorf("%s: allowed (%v), want refused as %s", addr, err, want)
		}
	}
	if checkAddr("127.0.0.1:80", true) != nil || checkAddr("[::1]:80", true) != nil || checkAddr("10.0.0.1:80", true) == nil {
		t.Error("AllowLoopback allows loopback only")
	}
}

func TestSlackIncomingWebhook(t *testing.T) {
	type payload struct {
		Text string `json:"text"`
	}
	r, srv := newReceiver(t, "", func(w http.ResponseWriter, _ int32) { io.WriteString(w, "ok") })
	if err := (&Slack{URL: srv.URL + "/services/T000/B000/XXXX", Net: loopback}).Send(context.Background(), "change-42/3", sample()); err != nil {
		t.Fatal(err)
	}
	var p payload
	if err := json.Unmarshal(<-r.bodies, &p); err != nil {
		t.Fatal(err)
	}
	want := "*[critical] noindex_added, title: https://shop.example/pricing*\n" +
		"• noindex_added (critical): \"meta robots \\\"index\\\"\" → \"meta robots \\\"noindex\\\"\"\n" +
		"• title (medium): \"Pricing\" → \"Pricing &lt;b&gt;plans&lt;/b&gt; &amp; more\\r\\nBcc: evil@example.com\"\n" +
		"```\nPlans start at [-ten-]{+twelve+} euros\na [-month.-]{+month, billed yearly.+}\n```\n" +
		"<http://127.0.0.1:8080/page?url=https%3A%2F%2Fshop.example%2Fpricing|History>\n"
	if p.Text != want {
		t.Fatalf("got\n%s\nwant\n%s", p.Text, want)
	}
	if h := <-r.headers; h.Get("Idempotency-Key") != "change-42/3" {
		t.Fatalf("headers %v", h)
	}
	// Slack's refusals are 4xx with a word: permanent.
	_, gone := newReceiver(t, "", func(w http.ResponseWriter, _ int32) { http.Error(w, "channel_is_archived", http.StatusGone) })
	if err := (&Slack{URL: gone.URL, Net: loopback}).Send(context.Background(), "k", sample()); !IsPermanent(err) || !strings.Contains(err.Error(), "channel_is_archived") {
		t.Fatalf("archived channel: %v", err)
	}
}

func TestConfigChannel(t *testing.T) {
	for _, bad := range []Config{
		{}, {Kind: "sms"}, {Kind: "webhook", URL: "ftp://x/"}, {Kind: "slack", URL: "https://u:p@hooks.example/x"},
		{Kind: "email", SMTP: "mail.example", From: "a@example.com", To: []string{"b@example.com"}},
		{Kind: "email", SMTP: "mail.example:25", From: "not an address", To: []string{"b@example.com"}},
		{Kind: "email", SMTP: "mail.example:25", From: "a@example.com"},
	} {
		if _, err := bad.Channel(Net{}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	c := Config{Kind: "slack", URL: "https://hooks.slack.example/services/T/B/secretpath"}
	if ch, err := c.Channel(Net{}); err != nil || strings.Contains(c.String(), "secretpath") || c.Destination() != "hooks.slack.example" {
		t.Fatalf("%T %v %q", ch, err, c.String())
	}
}
