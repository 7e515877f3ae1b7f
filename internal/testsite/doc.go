// Package testsite is a scripted HTTP site for tests: routes by path answer
// with a status, body, headers, delay, redirect, drip-fed body or a custom
// handler, and every request the server sees is recorded.
//
// A Site runs in one of two modes. New starts a real loopback
// httptest.Server. NewInMemory serves over in-memory net.Pipe connections
// through Site.Transport, so it works inside testing/synctest bubbles, where
// fake time then drives delays, gaps and client timeouts exactly (real
// sockets are not durably blocking, so they cannot be used in a bubble).
// A Network holds several sites under different host names and gives one
// Transport that routes each request to the site named by its host.
//
// Delays use the time package and end early when the request's context is
// cancelled, so a client timeout frees the handler.
//
// In-memory sites must be created inside the bubble that uses them, and are
// closed by t.Cleanup, which synctest runs inside the bubble.
package testsite
