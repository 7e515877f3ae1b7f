package store

import (
	"context"
	"database/sql"
	"fmt"
	"hash/maphash"
	"strings"
)

// A page's links are written with a few multi-row INSERTs of bound values (chunks of 64, 32, ... 1 rows,
// each statement prepared once), and the URLs they mention interned the same way: no JSON to encode and
// for SQLite to take apart, and no statement journal. A multi-row INSERT that may abort halfway needs one
// in a transaction of several statements, so that it can undo its own rows; INSERT OR IGNORE cannot abort
// on a constraint, and the writer checks that every row was written instead (a link's primary key is its
// page's next seq, read in the same transaction of the one writer, so none is ever ignored).

// linkChunk is the most rows one statement writes: 7 × 64 bound values for the links.
const linkChunk = 64

// linkWriter writes the links of the pages for the writer goroutine, which alone uses it: its cache of
// URL ids and its buffers are reused from page to page.
type linkWriter struct {
	seqOf                  *sql.Stmt             // the next seq of a page's links
	insert, intern, lookup [chunkSizes]*sql.Stmt // by chunk size 2^i: link rows; new URLs RETURNING url, id; known URLs' ids
	ids                    urlIDs                // the writer's cache of urls.id
	knownFirst             bool                  // look the unknown URLs up before interning them (see idsOf)
	urls                   []string              // the page, then each link's target
	keys                   []uint64              // their cache keys
	pos                    []int                 // each one's place in missing, -1 when the cache knew it
	missing                []string              // the distinct URLs the cache did not know
	missingID              []int64               // their ids, 0 until found
	at                     map[string]int        // a missing URL's place in missing
	args                   []any                 // a statement's bound values
	out                    []int64               // the ids of urls, in order
}

// chunkSizes is the number of prepared sizes: 1, 2, 4 ... linkChunk.
const chunkSizes = 7

var _ = [1]struct{}{}[1<<(chunkSizes-1)-linkChunk] // linkChunk is 2^(chunkSizes-1)

func (w *linkWriter) prepare(ctx context.Context, db *sql.DB) (err error) {
	if w.seqOf, err = db.PrepareContext(ctx, `SELECT IFNULL(MAX(seq) + 1, 0) FROM link_rows WHERE crawl_id = ? AND from_id = ?`); err != nil {
		return err
	}
	for i := range chunkSizes {
		k := 1 << i
		rows, urls := make([]string, k), make([]string, k)
		for r := range k {
			// Positional parameters only: the driver asks each parameter's name at every run, and a
			// numbered one's name costs an allocation.
			rows[r], urls[r] = "(?,?,?,?,?,?,?)", "(?)"
		}
		if w.insert[i], err = db.PrepareContext(ctx, `INSERT OR IGNORE INTO link_rows (crawl_id, from_id, seq, to_id, flags, anchor, tag) VALUES `+
			strings.Join(rows, ",")); err != nil {
			return err
		}
		if w.intern[i], err = db.PrepareContext(ctx, `INSERT OR IGNORE INTO urls (url) VALUES `+strings.Join(urls, ",")+` RETURNING url, id`); err != nil {
			return err
		}
		if w.lookup[i], err = db.PrepareContext(ctx, `SELECT url, id FROM urls WHERE url IN (?`+strings.Repeat(",?", k-1)+`)`); err != nil {
			return err
		}
	}
	return nil
}

func (w *linkWriter) close() {
	for _, st := range append(append(append([]*sql.Stmt{w.seqOf}, w.insert[:]...), w.intern[:]...), w.lookup[:]...) {
		if st != nil {
			st.Close()
		}
	}
}

// chunk is the size of the next statement for n rows (n > 0) and its index in the prepared arrays.
func chunk(n int) (k, i int) {
	for k = linkChunk; k > n; k >>= 1 {
	}
	for i = 0; 1<<i < k; i++ {
	}
	return k, i
}

// write writes links, all on page links[0].From, after the ones written for it before.
func (w *linkWriter) write(tx *sql.Tx, crawlID int64, links []LinkRecord) error {
	from := links[0].From
	ids, err := w.idsOf(tx, from, links)
	if err != nil {
		return fmt.Errorf("write the links of %s: %w", from, err)
	}
	var seq int64
	if err := tx.Stmt(w.seqOf).QueryRow(crawlID, ids[0]).Scan(&seq); err != nil {
		return fmt.Errorf("write the links of %s: %w", from, err)
	}
	var crawl, page any = crawlID, ids[0] // boxed once for all the rows
	for done := 0; done < len(links); {
		k, i := chunk(len(links) - done)
		args := w.args[:0]
		for j, l := range links[done : done+k] {
			code := linkTagCode(l.Tag)
			var tag any // NULL when flags has the tag's code
			if code == 0 && l.Tag != "" {
				tag = l.Tag
			}
			args = append(args, crawl, page, seq+int64(done+j), ids[done+j+1], B2i(l.External)|B2i(l.Nofollow)<<1|code<<2, nullStr(l.Anchor), tag)
		}
		w.args = args
		res, err := tx.Stmt(w.insert[i]).Exec(args...)
		if err != nil {
			return fmt.Errorf("write the links of %s: %w", from, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(k) {
			return fmt.Errorf("write the links of %s: %d of %d rows written (%v)", from, n, k, err)
		}
		done += k
	}
	clear(w.args)
	return nil
}

// idsOf is the urls.id of from and of each link's target, in that order, interning the URLs the file
// does not have yet. The slice is the writer's buffer, valid until the next call.
func (w *linkWriter) idsOf(tx *sql.Tx, from string, links []LinkRecord) ([]int64, error) {
	if w.at == nil {
		w.ids.seed, w.at = maphash.MakeSeed(), map[string]int{}
	}
	w.urls = append(w.urls[:0], from)
	for _, l := range links {
		w.urls = append(w.urls, l.To)
	}
	w.out, w.keys, w.pos = w.out[:0], w.keys[:0], w.pos[:0]
	w.missing, w.missingID = w.missing[:0], w.missingID[:0]
	clear(w.at)
	for _, u := range w.urls {
		k := w.ids.key(u)
		w.keys = append(w.keys, k)
		if id, ok := w.ids.get(k); ok {
			w.out, w.pos = append(w.out, id), append(w.pos, -1)
			continue
		}
		j, seen := w.at[u]
		if !seen {
			j = len(w.missing)
			w.at[u] = j
			w.missing, w.missingID = append(w.missing, u), append(w.missingID, 0)
		}
		w.out, w.pos = append(w.out, 0), append(w.pos, j)
	}
	if len(w.missing) == 0 {
		return w.out, nil
	}
	// Interned first when most of the last page's unknown URLs were new (early in a crawl), looked up
	// first when most were in the file already (later, once the cache has forgotten them): each URL then
	// costs one statement, not a failed insert and a lookup.
	first, second := w.intern[:], w.lookup[:]
	if w.knownFirst {
		first, second = second, first
	}
	if err := w.resolve(tx, first, w.missing); err != nil {
		return nil, fmt.Errorf("interning URLs: %w", err)
	}
	var rest []string
	for j, id := range w.missingID {
		if id == 0 {
			rest = append(rest, w.missing[j])
		}
	}
	if len(rest) > 0 {
		if err := w.resolve(tx, second, rest); err != nil {
			return nil, fmt.Errorf("interning URLs: %w", err)
		}
	}
	newURLs := len(w.missing) - len(rest) // the ones the insert answered
	if w.knownFirst {
		newURLs = len(rest)
	}
	w.knownFirst = newURLs*2 < len(w.missing)
	for i, j := range w.pos {
		if j < 0 {
			continue
		}
		id := w.missingID[j]
		if id == 0 {
			return nil, fmt.Errorf("interning URLs: %s not found after the insert", w.missing[j])
		}
		w.out[i] = id
		w.ids.put(w.keys[i], id)
	}
	return w.out, nil
}

// resolve runs stmts (by chunk size; each answers url, id rows) on urls, all in w.missing, and sets their
// w.missingID from the answer.
func (w *linkWriter) resolve(tx *sql.Tx, stmts []*sql.Stmt, urls []string) error {
	for done := 0; done < len(urls); {
		k, i := chunk(len(urls) - done)
		args := w.args[:0]
		for _, u := range urls[done : done+k] {
			args = append(args, u)
		}
		w.args = args
		rows, err := tx.Stmt(stmts[i]).Query(args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var u sql.RawBytes
			var id int64
			if err := rows.Scan(&u, &id); err != nil {
				rows.Close()
				return err
			}
			if j, ok := w.at[string(u)]; ok {
				w.missingID[j] = id
			}
		}
		if err := errorsJoinClose(rows); err != nil {
			return err
		}
		done += k
	}
	clear(w.args)
	return nil
}

// errorsJoinClose is the iteration's error, or else the close's.
func errorsJoinClose(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// urlIDsMax bounds each of the two generations of the writer's cache of URL ids (about 40 bytes an
// entry, 10 MB in all): when the current one is full it becomes the old one, and the URLs neither holds
// are looked up in the file again, so memory stays flat at any crawl size. The URLs many pages link to
// (home, navigation) are found in the old generation and moved to the current one, so they stay.
const urlIDsMax = 1 << 17

// urlIDs caches the urls.id of the URLs the writer has written, by a 64-bit hash of the URL. Two URLs
// whose hashes collide would share an id; for n URLs that happens with probability about n²/2⁶⁵ (3·10⁻⁸
// at a million), the bargain the frontier's seen set makes too. Only the writer goroutine uses it.
type urlIDs struct {
	seed     maphash.Seed
	cur, old map[uint64]int64
}

func (c *urlIDs) key(u string) uint64 { return maphash.String(c.seed, u) }

func (c *urlIDs) get(k uint64) (int64, bool) {
	if id, ok := c.cur[k]; ok {
		return id, true
	}
	id, ok := c.old[k]
	if ok {
		c.put(k, id)
	}
	return id, ok
}

func (c *urlIDs) put(k uint64, id int64) {
	if c.cur == nil || len(c.cur) >= urlIDsMax {
		c.cur, c.old = make(map[uint64]int64, urlIDsMax/4), c.cur
	}
	c.cur[k] = id
}
