// Package e2e tests the programs as a user runs them: each of
// examples/audit, examples/monitor, examples/fleet and examples/robotscheck
// is built once per test run with go build, then run as a subprocess with
// the real environment (no injected clock, transport, resolver or address
// guard) against loopback sites that record every request with its kernel
// arrival time. The programs' own -resolve flag points real host names at
// those sites.
//
// The tests cover the commands and flags the programs' READMEs document
// and every default that matters to a site owner: robots.txt first and
// obeyed (redirects included), the gap and in-flight limits, the user
// agents as the bot pages publish them, and the monitor's refusal of
// internal addresses. Targets that are not loopback (10.0.0.1, the cloud
// metadata address) are only ever tried inside a network namespace that has
// nothing but lo (unshare -rn), so no packet can leave the machine.
//
// The package has no non-test code; this file only documents it.
package e2e
