package report

// CSP is the Content-Security-Policy of the report's and compare's pages (the one their <meta> tag
// carries): their inline style and one hashed script, and nothing that can fetch. A server that serves
// them (the app) sends it as their header, in place of its own, which would refuse the inline style.
func CSP() string { return reportCSP }
