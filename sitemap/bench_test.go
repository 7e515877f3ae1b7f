package sitemap

import (
	"bytes"
	"encoding/xml"
	"io"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRead parses doc b.N times. Besides the usual wall-clock MB/s it
// reports cpu-MB/s, throughput per CPU second of the whole process (GC
// included), which other load on a shared machine does not distort.
// MB/s counts uncompressed bytes, also for gzip.
func benchRead(b *testing.B, doc []byte, size int, source string, want int) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		r := NewReader(bytes.NewReader(doc), source)
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != want {
			b.Fatalf("got %d entries, want %d", n, want)
		}
	}
	cpu := cpuTime() - start
	b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
}

func BenchmarkReaderURLSet50k(b *testing.B) {
	doc := genURLSet(50000)
	benchRead(b, doc, len(doc), "https://www.example.com/sitemap.xml", 50000)
}

func BenchmarkReaderURLSet50kGzip(b *testing.B) {
	doc := genURLSet(50000)
	benchRead(b, gz(b, doc), len(doc), "https://www.example.com/sitemap.xml.gz", 50000)
}

func BenchmarkReaderText50k(b *testing.B) {
	var buf bytes.Buffer
	for i := range 50000 {
		buf.WriteString("https://www.example.com/products/category-")
		buf.WriteString(string(rune('a' + i%26)))
		buf.WriteString("/item-")
		buf.WriteString(itoa(i))
		buf.WriteString(".html\n")
	}
	benchRead(b, buf.Bytes(), buf.Len(), "https://www.example.com/sitemap.txt", 50000)
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}

// BenchmarkEncodingXMLBaseline decodes the same document the way common Go
// sitemap libraries do (encoding/xml, one DecodeElement per <url>), as a
// same-machine reference for the figures above.
func BenchmarkEncodingXMLBaseline(b *testing.B) {
	doc := genURLSet(50000)
	type url struct {
		Loc        string `xml:"loc"`
		LastMod    string `xml:"lastmod"`
		ChangeFreq string `xml:"changefreq"`
		Priority   string `xml:"priority"`
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		d := xml.NewDecoder(bytes.NewReader(doc))
		n := 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "url" {
				var u url
				if err := d.DecodeElement(&u, &se); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
		if n != 50000 {
			b.Fatalf("got %d", n)
		}
	}
	cpu := cpuTime() - start
	b.ReportMetric(float64(len(doc))*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
}
