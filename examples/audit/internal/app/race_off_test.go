//go:build !race

package app

// liveKeepsUpPages is TestBrowserLiveKeepsUp's site size: without the race detector the crawl runs at
// hundreds of pages a second, and 3,000 pages keep it going for seconds.
const liveKeepsUpPages = 3000
