//go:build race

package app

// liveKeepsUpPages is TestBrowserLiveKeepsUp's site size: under the race detector the crawl runs at about
// 40 pages a second, so 1,000 pages still publish four times the hub's ten updates a second for 25 s.
const liveKeepsUpPages = 1000
