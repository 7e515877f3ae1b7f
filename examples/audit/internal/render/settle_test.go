package render

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/stretchr/testify/assert"
)

// The page's DOM is read only after renderSettle without a request in flight, counted from the load
// event. Under load the page's last request can end long before the load event, and a request a script
// started meanwhile (contact.js's fetch) reaches us only after it: settle returned at once and the page
// was read and closed with that request unseen, so TestDemoRender lost render_resource_failed /contact.
func TestSettleWaitsAfterTheLoadEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := &tab{active: map[network.RequestID]time.Time{}, changed: time.Now()}
		time.Sleep(time.Second) // a slow load: its last request changed a second before the load event

		lateRequest := make(chan struct{})
		go func() {
			time.Sleep(100 * time.Millisecond) // its Fetch.requestPaused arrives after the load event
			tb.mu.Lock()
			tb.active["api"], tb.changed = time.Time{}, time.Now()
			tb.mu.Unlock()
			close(lateRequest)
			time.Sleep(500 * time.Millisecond) // then it fails
			tb.mu.Lock()
			delete(tb.active, "api")
			tb.changed = time.Now()
			tb.mu.Unlock()
		}()
		start := time.Now()
		tb.settle(t.Context())
		select {
		case <-lateRequest:
		default:
			t.Fatal("settle returned before the request the page started could be seen")
		}
		assert.Equal(t, 600*time.Millisecond+renderSettle, time.Since(start).Round(50*time.Millisecond),
			"settle waits for the late request to end, then for renderSettle of quiet")
	})
}

// A page with nothing in flight is read renderSettle after its load event, and a page that never goes
// quiet is read at renderSettleMax.
func TestSettleBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := &tab{active: map[network.RequestID]time.Time{}, changed: time.Now()}
		time.Sleep(time.Second)
		start := time.Now()
		tb.settle(t.Context())
		assert.Equal(t, renderSettle, time.Since(start).Round(50*time.Millisecond))

		tb.active["poll"] = time.Time{} // in flight, no answer yet
		start = time.Now()
		tb.settle(t.Context())
		assert.Equal(t, renderSettleMax, time.Since(start).Round(50*time.Millisecond))
	})
}
