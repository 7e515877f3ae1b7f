package live_test

import (
	"fmt"
	"net/http"

	"github.com/politecrawl/polite/examples/internal/live"
)

// A crawl publishes one event per page and one when its politeness changes;
// the app mounts the hub on a GET route (behind localweb's Guard) and its
// page reads it with EventSource("/events").
func ExampleHub() {
	hub := &live.Hub{}
	mux := http.NewServeMux()
	mux.Handle("GET /events", hub)

	type page struct {
		URL    string `json:"url"`
		Status int    `json:"status"`
	}
	hub.Publish(live.Event{Add: map[string]int64{"pages": 1, "requests": 1}, Item: page{"https://shop.example/", 200}})
	hub.Publish(live.Event{Add: map[string]int64{"pages": 1, "requests": 3}, Item: page{"https://shop.example/sale", 429}})
	hub.Publish(live.Event{Set: map[string]string{"politeness": "slowed down after a 429: 1 in flight, 3s gap"}})

	m := hub.Snapshot() // what a browser that connects now gets first
	fmt.Println(m.Seq, m.Counters, m.State["politeness"])
	for _, it := range m.Items {
		fmt.Println(string(it))
	}
	// Output:
	// 3 map[pages:2 requests:4] slowed down after a 429: 1 in flight, 3s gap
	// {"url":"https://shop.example/","status":200}
	// {"url":"https://shop.example/sale","status":429}
}
