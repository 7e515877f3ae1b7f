// Package readme holds the test that keeps the repository's README honest:
// every Go block in README.md is a complete program that is built and run
// against a loopback site. It has no API.
package readme
