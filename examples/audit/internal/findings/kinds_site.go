package findings

// siteKinds are the kinds found by the passes over the whole crawl (link graph, duplicates, canonical and
// hreflang targets, link score), with their severity, category and advice. Their Kind* constants are
// declared in this file.
var siteKinds = []KindInfo{}
