// Package app is the audit's window (`audit app`): a web app served on loopback over the same SQLite file
// the command line writes. A person types an address and presses go, watches the crawl live (Server-Sent
// Events from a live.Hub), stops and resumes it, explores the results by finding kind with a detail pane
// per URL, and compares past crawls.
//
// It runs the crawl package's crawl exactly as the command line does (same validation, same rows), reads
// only through store's queries, and reuses report for the HTML report, the exports and compare. It must
// not listen, check tokens or set security headers itself: it is served behind localweb's Guard. Its
// pages are html/template with the scripts and styles in files of its own (web/), never inline.
package app
