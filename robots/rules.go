package robots

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxBodySize is the number of bytes of a robots.txt body that Parse reads
// (500 KiB, RFC 9309 §2.5); the rest is ignored and [Rules.Truncated]
// reports it.
const MaxBodySize = 512000

// maxCrawlDelay bounds Crawl-delay values so that the conversion to a
// time.Duration cannot overflow; no real file asks for more than a day.
const maxCrawlDelay = 24 * time.Hour

// Rule is one Allow or Disallow line of a robots.txt file.
type Rule struct {
	Allow   bool   // true for Allow, false for Disallow
	Pattern string // the path pattern as written in the file
	Line    int    // 1-based line number in the file
}

// String returns the rule as a robots.txt line, e.g. "Disallow: /basket/".
func (r Rule) String() string {
	if r.Allow {
		return "Allow: " + r.Pattern
	}
	return "Disallow: " + r.Pattern
}

// pattern is the matching form of a Rule: percent-encoding normalised, with
// a trailing `$` split off into anchored.
type pattern struct {
	s        string // normalised pattern without the trailing `$`
	need     uint64 // byteSet of the literal octets of s: a cheap filter before matching
	octets   int32  // specificity: octets of the normalised pattern, `$` included (at most MaxBodySize)
	star     int32  // index of the first `*` in s, -1 if none
	anchored bool   // pattern ended in `$`
	allow    bool   // copy of Rule.Allow, next to the data the matcher reads
}

// group is one run of user-agent lines and the rules that follow them.
type group struct {
	agentLo, agentHi int32 // r.agents[agentLo:agentHi]
	ruleLo, ruleHi   int32 // r.order[ruleLo:ruleHi], most specific first
	delay            time.Duration
	hasDelay         bool
}

// selection is the set of groups that applies to one product token: all
// groups naming it (merged), or all `*` groups.
type selection struct {
	groups []int32  // indices into r.groups, file order
	agents []string // user-agent values of groups, precomputed unless over budget
}

// keyEntry maps a lower-cased product token to its selection.
type keyEntry struct {
	key string
	sel int32
}

// Rules is a parsed robots.txt file. It is immutable and safe for
// concurrent use. The zero value and a nil *Rules allow everything.
type Rules struct {
	rules    []Rule    // file order
	pats     []pattern // parallel to rules
	order    []int32   // rule indices grouped by group, most specific first
	agents   []string  // user-agent values as written, file order
	groups   []group
	sels     []selection
	keys     []keyEntry // sorted by key
	star     int32      // selection of the `*` groups, -1 if none
	sitemaps []string

	truncated bool
}

// Parse parses a robots.txt body. It never fails and never panics: lines it
// cannot parse are skipped without affecting the rest, and only the first
// [MaxBodySize] bytes are read.
func Parse(body []byte) *Rules {
	r := &Rules{star: -1}
	if len(body) > MaxBodySize {
		r.truncated = true
		// Drop a line cut in half by the limit: half a pattern would be a
		// different rule from the one the site owner wrote.
		if c := body[MaxBodySize]; c != '\n' && c != '\r' {
			body = body[:MaxBodySize]
			i := len(body)
			for i > 0 && body[i-1] != '\n' && body[i-1] != '\r' {
				i--
			}
			body = body[:i]
		} else {
			body = body[:MaxBodySize]
		}
	}
	// One copy of the body; every string Parse keeps is a substring of it.
	s := string(body)
	s = skipBOM(s)

	var p parser
	p.r = r
	p.parse(s)
	p.finish()
	return r
}

// skipBOM drops a UTF-8 byte order mark, or the first bytes of one.
func skipBOM(s string) string {
	switch {
	case strings.HasPrefix(s, "\xEF\xBB\xBF"):
		return s[3:]
	case strings.HasPrefix(s, "\xEF\xBB"):
		return s[2:]
	case strings.HasPrefix(s, "\xEF"):
		return s[1:]
	}
	return s
}

type parser struct {
	r        *Rules
	cur      int  // current group index, -1 before the first user-agent
	inAgents bool // the last group record was a user-agent line
	seen     map[string]struct{}
}

func (p *parser) parse(s string) {
	r := p.r
	p.cur = -1
	// Nearly every record has a colon: their count bounds the rules of a
	// usual file, so the rule slices are allocated once (colon-less records,
	// a typo, only make them grow).
	n := min(strings.Count(s, ":")+1, 1<<16)
	r.rules = make([]Rule, 0, n)
	r.pats = make([]pattern, 0, n)

	line := 0
	nl := -1 // absolute index of the next '\n' at or after i, or len(s)
	for i := 0; i < len(s); {
		if nl < i {
			nl = strings.IndexByte(s[i:], '\n')
			if nl < 0 {
				nl = len(s)
			} else {
				nl += i
			}
		}
		text := s[i:nl]
		next := nl + 1
		if c := strings.IndexByte(text, '\r'); c >= 0 {
			text = text[:c]
			next = i + c + 1
			if next < len(s) && s[next] == '\n' {
				next++
			}
		}
		line++
		p.line(text, line)
		i = next
	}
}

func (p *parser) line(text string, line int) {
	if c := strings.IndexByte(text, '#'); c >= 0 {
		text = text[:c]
	}
	name, value, ok := splitRecord(text)
	if !ok {
		return
	}
	r := p.r
	switch {
	case equalFold(name, "user-agent"):
		if !p.inAgents {
			r.groups = append(r.groups, group{
				agentLo: int32(len(r.agents)), agentHi: int32(len(r.agents)),
				ruleLo: int32(len(r.rules)), ruleHi: int32(len(r.rules)),
			})
			p.cur = len(r.groups) - 1
			p.inAgents = true
		}
		r.agents = append(r.agents, value)
		r.groups[p.cur].agentHi = int32(len(r.agents))
	case equalFold(name, "allow"), equalFold(name, "disallow"):
		if p.cur < 0 {
			return // before the first user-agent: belongs to no group
		}
		p.inAgents = false
		if value == "" {
			return // an empty rule matches nothing
		}
		r.rules = append(r.rules, Rule{Allow: len(name) == 5, Pattern: value, Line: line})
		r.pats = append(r.pats, compilePattern(value, len(name) == 5))
		r.groups[p.cur].ruleHi = int32(len(r.rules))
	case equalFold(name, "sitemap"):
		p.sitemap(value)
	case equalFold(name, "crawl-delay"):
		if p.cur < 0 || r.groups[p.cur].hasDelay {
			return
		}
		if d, ok := parseDelay(value); ok {
			r.groups[p.cur].delay, r.groups[p.cur].hasDelay = d, true
		}
	}
}

// splitRecord splits a line (comment removed) into a record's name and
// value. The usual form is "name: value". Like Google's parser, it also
// reads "name value" without the colon, but only when name is a directive
// this package knows (see knownName) and the value is a single word: the
// missing colon is a common typo ("Disallow /private"), while a line of
// several words without a colon is prose, not a record. The colon-less form
// is recognised before a colon inside the value too ("Sitemap
// https://e.com/s.xml", "Disallow /a:b"): the text before that colon is then
// not a name, because it holds whitespace.
func splitRecord(text string) (name, value string, ok bool) {
	colon := strings.IndexByte(text, ':')
	if colon >= 0 {
		name = trimSpace(text[:colon])
		if !hasSpace(name) {
			return name, trimSpace(text[colon+1:]), true
		}
	}
	t := trimSpace(text)
	i := 0
	for i < len(t) && !isSpace(t[i]) {
		i++
	}
	name, value = t[:i], trimSpace(t[i:])
	if value == "" || hasSpace(value) || !knownName(name) {
		return "", "", false
	}
	return name, value, true
}

// knownName reports whether name is one of the directives Parse reads,
// ignoring case: user-agent, allow, disallow, sitemap and crawl-delay.
func knownName(name string) bool {
	switch len(name) {
	case 5:
		return equalFold(name, "allow")
	case 7:
		return equalFold(name, "sitemap")
	case 8:
		return equalFold(name, "disallow")
	case 10:
		return equalFold(name, "user-agent")
	case 11:
		return equalFold(name, "crawl-delay")
	}
	return false
}

func hasSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			return true
		}
	}
	return false
}

func (p *parser) sitemap(value string) {
	if !isAbsoluteHTTP(value) {
		return
	}
	r := p.r
	if p.seen == nil && len(r.sitemaps) >= 8 {
		p.seen = make(map[string]struct{}, 16)
		for _, s := range r.sitemaps {
			p.seen[s] = struct{}{}
		}
	}
	if p.seen != nil {
		if _, dup := p.seen[value]; dup {
			return
		}
		p.seen[value] = struct{}{}
	} else if slices.Contains(r.sitemaps, value) {
		return
	}
	r.sitemaps = append(r.sitemaps, value)
}

// isAbsoluteHTTP reports whether s is an absolute http(s) URL with a host.
func isAbsoluteHTTP(s string) bool {
	if !hasPrefixFold(s, "http://") && !hasPrefixFold(s, "https://") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != ""
}

func parseDelay(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	if f > maxCrawlDelay.Seconds() {
		return maxCrawlDelay, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// finish builds the lookup structures: rules sorted by specificity within
// each group, and one selection per distinct product token.
func (p *parser) finish() {
	r := p.r
	r.order = make([]int32, len(r.rules))
	// Sort each group's rules most specific first, Allow first on a tie,
	// then file order, by sorting plain integers that encode all three.
	var keys []uint64
	for gi := range r.groups {
		g := &r.groups[gi]
		o := r.order[g.ruleLo:g.ruleHi]
		if len(o) <= 1 {
			for i := range o {
				o[i] = g.ruleLo + int32(i)
			}
			continue
		}
		if keys == nil {
			keys = make([]uint64, 0, len(r.rules))
		}
		keys = keys[:0]
		for ri := g.ruleLo; ri < g.ruleHi; ri++ {
			p := &r.pats[ri]
			rank := uint64(p.octets) << 1
			if p.allow {
				rank |= 1
			}
			keys = append(keys, (math.MaxUint32-rank)<<32|uint64(ri))
		}
		slices.Sort(keys)
		for i, k := range keys {
			o[i] = int32(k & math.MaxUint32)
		}
	}

	// Pair every agent's lower-cased token with its group; sort; each run of
	// one key becomes a selection. Tokens with upper-case letters are
	// lower-cased into one shared buffer rather than one string each.
	type pair struct {
		key      string
		group    int32
		off, end int32 // key is lower[off:end] when set after the loop
	}
	pairs := make([]pair, 0, len(r.agents))
	var star []int32
	var lower strings.Builder
	for gi := range r.groups {
		g := &r.groups[gi]
		for _, a := range r.agents[g.agentLo:g.agentHi] {
			if isStar(a) {
				if len(star) == 0 || star[len(star)-1] != int32(gi) {
					star = append(star, int32(gi))
				}
				continue
			}
			tok := tokenPart(a)
			if tok == "" {
				continue // names no product token; matches nobody
			}
			if !hasUpper(tok) {
				pairs = append(pairs, pair{key: tok, group: int32(gi), off: -1})
				continue
			}
			if lower.Len() == 0 {
				lower.Grow(len(r.agents) * 12)
			}
			off := int32(lower.Len())
			for i := 0; i < len(tok); i++ {
				lower.WriteByte(lowerByte(tok[i]))
			}
			pairs = append(pairs, pair{group: int32(gi), off: off, end: int32(lower.Len())})
		}
	}
	if lower.Len() > 0 {
		buf := lower.String()
		for i := range pairs {
			if pairs[i].off >= 0 {
				pairs[i].key = buf[pairs[i].off:pairs[i].end]
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return int(a.group - b.group)
	})
	groupIdx := make([]int32, 0, len(pairs)+len(star))
	r.keys = make([]keyEntry, 0, len(pairs))
	r.sels = make([]selection, 0, len(pairs)+1)
	for i := 0; i < len(pairs); {
		j := i
		lo := len(groupIdx)
		for ; j < len(pairs) && pairs[j].key == pairs[i].key; j++ {
			if len(groupIdx) == lo || groupIdx[len(groupIdx)-1] != pairs[j].group {
				groupIdx = append(groupIdx, pairs[j].group)
			}
		}
		r.keys = append(r.keys, keyEntry{key: pairs[i].key, sel: int32(len(r.sels))})
		r.sels = append(r.sels, selection{groups: groupIdx[lo:len(groupIdx):len(groupIdx)]})
		i = j
	}
	if len(star) > 0 {
		r.star = int32(len(r.sels))
		r.sels = append(r.sels, selection{groups: star})
	}

	// Precompute the agents each selection reports, so Explain does not
	// allocate. Merged selections need their own slice; a budget keeps a
	// hostile file (many groups repeating many agents) from costing memory
	// quadratic in its size, falling back to building them per call.
	budget := 2*len(r.agents) + 1024
	var backing []string
	for pass := 0; pass < 2; pass++ {
		used := 0
		for i := range r.sels {
			sel := &r.sels[i]
			if len(sel.groups) == 1 {
				g := &r.groups[sel.groups[0]]
				sel.agents = r.agents[g.agentLo:g.agentHi:g.agentHi]
				continue
			}
			n := 0
			for _, gi := range sel.groups {
				n += int(r.groups[gi].agentHi - r.groups[gi].agentLo)
			}
			if used+n > budget {
				continue
			}
			if pass == 1 {
				for _, gi := range sel.groups {
					g := &r.groups[gi]
					backing = append(backing, r.agents[g.agentLo:g.agentHi]...)
				}
				sel.agents = backing[used : used+n : used+n]
			}
			used += n
		}
		if pass == 0 {
			if used == 0 {
				break
			}
			backing = make([]string, 0, used)
		}
	}
}

func (r *Rules) mergedAgents(groups []int32, n int) []string {
	out := make([]string, 0, n)
	for _, gi := range groups {
		g := &r.groups[gi]
		out = append(out, r.agents[g.agentLo:g.agentHi]...)
	}
	return out[:len(out):len(out)]
}

// isStar reports whether a user-agent value is the `*` wildcard.
func isStar(v string) bool {
	return len(v) > 0 && v[0] == '*' && (len(v) == 1 || isSpace(v[1]))
}

// tokenPart returns the product-token prefix of s: the leading run of
// letters, digits, `_` and `-` ("CrawlCove-Crawler/1.0" -> "CrawlCove-Crawler").
// Digits are accepted beyond RFC 9309 so that `2-UAcomBot` works.
func tokenPart(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return s[:i]
		}
	}
	return s
}

// lookup returns the selection that applies to token, or -1.
func (r *Rules) lookup(token string) int32 {
	if sel := r.named(token); sel >= 0 {
		return sel
	}
	return r.star
}

// lookupAs returns the selection of the first of tokens that some group
// names, with that token's index; else the `*` selection (or -1) and -1.
func (r *Rules) lookupAs(tokens []string) (sel int32, tok int) {
	for i, t := range tokens {
		if sel := r.named(t); sel >= 0 {
			return sel, i
		}
	}
	return r.star, -1
}

// named returns the selection of the groups naming token, or -1.
func (r *Rules) named(token string) int32 {
	token = tokenPart(trimSpace(token))
	if token != "" && len(r.keys) > 0 {
		i, found := slices.BinarySearchFunc(r.keys, token, func(e keyEntry, t string) int {
			return compareLower(e.key, t)
		})
		if found {
			return r.keys[i].sel
		}
	}
	return -1
}

// compareLower compares the lower-case key with token as if token were
// lower-cased, without allocating.
func compareLower(key, token string) int {
	n := min(len(key), len(token))
	for i := 0; i < n; i++ {
		a, b := key[i], lowerByte(token[i])
		if a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	return len(key) - len(token)
}

// decide finds the winning rule (index, -1 if none) of selection sel for
// a normalised path. It does not allocate.
func (r *Rules) decide(sel int32, path string) (rule int32) {
	rule = -1
	if sel < 0 {
		return -1
	}
	best := int32(-1)
	has := byteSet(path)
	for _, gi := range r.sels[sel].groups {
		g := &r.groups[gi]
		for _, ri := range r.order[g.ruleLo:g.ruleHi] {
			p := &r.pats[ri]
			if p.octets < best || (p.octets == best && (!p.allow || r.pats[rule].allow)) {
				break // nothing later in this group can beat the best so far
			}
			if p.need&^has == 0 && p.match(path) {
				best, rule = p.octets, ri
				break
			}
		}
	}
	return rule
}

// Allowed reports whether the crawler with the given product token may
// fetch rawURL, which may be absolute or a path with optional query. For
// ASCII URLs it does not allocate.
func (r *Rules) Allowed(token, rawURL string) bool {
	if r == nil {
		return true
	}
	path := pathOf(rawURL)
	if path == "/robots.txt" {
		return true
	}
	rule := r.decide(r.lookup(token), path)
	return rule < 0 || r.rules[rule].Allow
}

// AllowedAs is Allowed for a crawler that answers to several product
// tokens, in order of preference (a new token before the old one, a
// specific token before its family): the first token that some group
// names decides, and only when none is named do the `*` groups apply.
func (r *Rules) AllowedAs(tokens []string, rawURL string) bool {
	if r == nil {
		return true
	}
	path := pathOf(rawURL)
	if path == "/robots.txt" {
		return true
	}
	sel, _ := r.lookupAs(tokens)
	rule := r.decide(sel, path)
	return rule < 0 || r.rules[rule].Allow
}

// Explain is Allowed with the reason: the rule that decided (as written,
// with its line) and the user-agent values of the group(s) used. The
// returned Rule and Agents share memory with r and must not be modified.
func (r *Rules) Explain(token, rawURL string) Decision {
	return r.ExplainAs([]string{token}, rawURL)
}

// ExplainAs is AllowedAs with the reason, as Explain gives it; Decision.Token
// says which of tokens was matched by a group ("" when the `*` groups or
// no group applied).
func (r *Rules) ExplainAs(tokens []string, rawURL string) Decision {
	if r == nil {
		return Decision{Allowed: true}
	}
	path := pathOf(rawURL)
	if path == "/robots.txt" {
		return Decision{Allowed: true, always: true}
	}
	sel, tok := r.lookupAs(tokens)
	rule := r.decide(sel, path)
	d := Decision{Allowed: true}
	if sel >= 0 {
		d.Wildcard = sel == r.star
		d.Agents = r.agentsOf(sel)
	}
	if tok >= 0 {
		d.Token = tokenPart(trimSpace(tokens[tok]))
	}
	if rule >= 0 {
		d.Rule = &r.rules[rule]
		d.Allowed = d.Rule.Allow
	}
	return d
}

// agentsOf returns the user-agent values of a selection's groups; it only
// allocates for merged selections over the precomputation budget.
func (r *Rules) agentsOf(sel int32) []string {
	s := &r.sels[sel]
	if s.agents != nil {
		return s.agents
	}
	n := 0
	for _, gi := range s.groups {
		n += int(r.groups[gi].agentHi - r.groups[gi].agentLo)
	}
	return r.mergedAgents(s.groups, n)
}

// Sitemaps returns the absolute URLs of the file's Sitemap lines, in file
// order, without duplicates. The slice is a copy.
func (r *Rules) Sitemaps() []string {
	if r == nil || len(r.sitemaps) == 0 {
		return nil
	}
	return slices.Clone(r.sitemaps)
}

// CrawlDelay returns the Crawl-delay of the group(s) that apply to token:
// the first valid value in file order. Crawl-delay is not part of RFC 9309;
// it is exposed for information and capped at 24 hours.
func (r *Rules) CrawlDelay(token string) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	sel := r.lookup(token)
	if sel < 0 {
		return 0, false
	}
	for _, gi := range r.sels[sel].groups {
		if g := &r.groups[gi]; g.hasDelay {
			return g.delay, true
		}
	}
	return 0, false
}

// Truncated reports whether the body was longer than [MaxBodySize] bytes
// and its tail was ignored.
func (r *Rules) Truncated() bool { return r != nil && r.truncated }

// Rules returns the Allow and Disallow rules of the file in file order,
// including those of groups that apply to nobody. The slice is a copy.
func (r *Rules) Rules() []Rule {
	if r == nil {
		return nil
	}
	return slices.Clone(r.rules)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// equalFold compares s with a lower-case ASCII word, ignoring case.
func equalFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerByte(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

func hasPrefixFold(s, lowerPrefix string) bool {
	return len(s) >= len(lowerPrefix) && equalFold(s[:len(lowerPrefix)], lowerPrefix)
}
