// Package demo is the built-in demo shop that -demo crawls and the tests use: a loopback site with a
// broken link, a redirect chain, a disallowed area, a sitemap index, llms.txt and scripted pages for the
// rendered pass, and the record of what its server saw.
//
// It is a test site, not a crawler: it never fetches and never opens the database.
package demo
