package alert

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// onlyLoopback reports whether this process is in a network namespace whose
// only interface is lo, so no packet can leave the machine.
func onlyLoopback() bool {
	ifs, err := net.Interfaces()
	if err != nil {
		return false
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			return false
		}
	}
	return true
}

// inLoopbackNamespace re-runs the calling test in a network namespace with
// only lo (unshare -rn) and reports whether the caller is already inside.
func inLoopbackNamespace(t *testing.T) bool {
	t.Helper()
	if onlyLoopback() {
		return true
	}
	unavailable := func(why string) {
		msg := "needs a network namespace with only lo (unshare -rn, util-linux): " + why
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		unavailable(err.Error())
	}
	if err := exec.Command(unshare, "-rn", "true").Run(); err != nil {
		unavailable(err.Error())
	}
	out, err := exec.Command(unshare, "-rn", os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in the namespace: %v\n%s", err, out)
	}
	return false
}

func TestDefaultNetRefusesInternalAddressesBeforeConnect(t *testing.T) {
	if !inLoopbackNamespace(t) {
		return
	}
	// Inside the namespace only lo exists: a connect to any of these would
	// fail with "network is unreachable", so a RefusedError proves the
	// refusal came first, from the dialer's check after resolving.
	for _, url := range []string{
		"http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data/", "http://[fd00::1]/", "http://100.64.1.1/",
		"http://192.168.1.1:8080/", "http://[::ffff:10.1.1.1]/", "http://localhost:1/",
	} {
		for name, ch := range map[string]Channel{"webhook": &Webhook{URL: url}, "slack": &Slack{URL: url}} {
			err := ch.Send(context.Background(), "k", sample())
			var refused *RefusedError
			if !errors.As(err, &refused) || !IsPermanent(err) {
				t.Errorf("%s to %s: %v", name, url, err)
			}
		}
	}
	for _, addr := range []string{"10.0.0.1:25", "[fe80::1]:587", "localhost:25"} {
		err := (&Email{Addr: addr, From: "m@example.com", To: []string{"a@example.com"}}).Send(context.Background(), "k", sample())
		var refused *RefusedError
		if !errors.As(err, &refused) || !IsPermanent(err) {
			t.Errorf("email via %s: %v", addr, err)
		}
	}
}
