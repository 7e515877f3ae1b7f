package findings

// pageKinds are the kinds found in one page's own response (its HTML, headers and timings) while it is
// fetched, with their severity, category and advice. Their Kind* constants are declared in this file.
var pageKinds = []KindInfo{}
