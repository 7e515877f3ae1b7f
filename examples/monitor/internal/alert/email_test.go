package alert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/polite/examples/monitor/internal/mailpittest"
)

func TestEmailThroughMailpit(t *testing.T) {
	mp := mailpittest.Start(t, "--smtp-auth-accept-any", "--smtp-auth-allow-insecure", `--smtp-allowed-recipients=@example\.com$`)
	e := &Email{Addr: mp.SMTP, From: "2-UAcomBot monitor <monitor@example.com>", To: []string{"seo@example.com"},
		Username: "monitor", Password: "pw", Net: loopback}
	if err := e.Send(context.Background(), "change-42/7", sample()); err != nil {
		t.Fatal(err)
	}
	msgs := mp.Messages(t)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	got := msgs[0]
	if got.Subject != "[critical] noindex_added, title: https://shop.example/pricing" || got.From.Address != "monitor@example.com" ||
		len(got.To) != 1 || got.To[0].Address != "seo@example.com" || len(got.Bcc) != 0 ||
		got.MessageID != "change-42_7@polite.alert" || got.Username != "monitor" {
		t.Fatalf("message %+v", got)
	}
	for _, want := range []string{
		"https://shop.example/pricing changed (checked 2026-12-01 12:00:00Z)",
		`noindex_added (critical): "meta robots \"index\"" -> "meta robots \"noindex\""`,
		`title (medium): "Pricing" -> "Pricing <b>plans</b> & more\r\nBcc: evil@example.com"`,
		"Plans start at [-ten-]{+twelve+} euros",
		"History: http://127.0.0.1:8080/page?url=https%3A%2F%2Fshop.example%2Fpricing",
	} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, got.Text)
		}
	}

	// A recipient the server refuses (550) is permanent.
	bad := *e
	bad.To = []string{"someone@other.test"}
	if err := bad.Send(context.Background(), "k2", sample()); !IsPermanent(err) || !strings.Contains(err.Error(), mp.SMTP) {
		t.Fatalf("refused recipient: %v", err)
	}
	// RequireTLS with a server that offers no STARTTLS sends nothing.
	notls := *e
	notls.RequireTLS = true
	if err := notls.Send(context.Background(), "k3", sample()); !errors.Is(err, ErrNoTLS) || !IsPermanent(err) {
		t.Fatalf("RequireTLS: %v", err)
	}
	// The default Net refuses the loopback server before connecting.
	guarded := *e
	guarded.Net = Net{}
	var refused *RefusedError
	if err := guarded.Send(context.Background(), "k4", sample()); !errors.As(err, &refused) {
		t.Fatalf("default net: %v", err)
	}
	if n := len(mp.Messages(t)); n != 1 {
		t.Fatalf("%d messages after the refusals", n)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailpit test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestEmailSTARTTLSAndAuth(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	mp := mailpittest.Start(t, "--smtp-tls-cert", certFile, "--smtp-tls-key", keyFile, "--smtp-require-starttls", "--smtp-auth-accept-any")
	e := &Email{Addr: mp.SMTP, From: "monitor@example.com", To: []string{"seo@example.com", "dev@example.com"},
		Username: "alerts", Password: "secret", RequireTLS: true,
		TLSConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}, Net: loopback}
	if err := e.Send(context.Background(), "change-42/8", sample()); err != nil {
		t.Fatal(err)
	}
	msgs := mp.Messages(t)
	if len(msgs) != 1 || len(msgs[0].To) != 2 || msgs[0].Username != "alerts" {
		t.Fatalf("messages %+v", msgs)
	}
	// A certificate nobody vouches for is not trusted: nothing is sent.
	untrusted := *e
	untrusted.TLSConfig = nil
	var uerr *tls.CertificateVerificationError
	if err := untrusted.Send(context.Background(), "k", sample()); !errors.As(err, &uerr) {
		t.Fatalf("untrusted certificate: %v", err)
	}
	if n := len(mp.Messages(t)); n != 1 {
		t.Fatalf("%d messages", n)
	}
}

func TestEmailRenderIsSafe(t *testing.T) {
	e := &Email{Now: func() time.Time { return time.Date(2026, 12, 1, 12, 0, 1, 0, time.UTC) }}
	m := sample()
	m.PageURL = "https://shop.example/\r\nBcc: x@evil.example"
	from, to := mustAddr(t, "Monitor <m@example.com>"), mustAddr(t, "a@example.com")
	b, err := e.render("key/1\r\nX: y", from, []*mailAddr{to}, m)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "\r\n\r\n")
	for _, line := range strings.Split(head, "\r\n") {
		name, _, _ := strings.Cut(line, ":")
		switch name {
		case "From", "To", "Subject", "Date", "Message-ID", "X-Polite-Change", "MIME-Version", "Content-Type", "Content-Transfer-Encoding":
		default:
			t.Errorf("unexpected header line %q", line)
		}
	}
	if !strings.Contains(head, "Message-ID: <key_1__X__y@polite.alert>") || !strings.Contains(head, "Date: Tue, 01 Dec 2026 12:00:01 +0000") {
		t.Fatalf("head:\n%s", head)
	}
}

type mailAddr = mail.Address

func mustAddr(t *testing.T, s string) *mail.Address {
	t.Helper()
	a, err := mail.ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
