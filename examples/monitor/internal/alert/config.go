package alert

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Config is one channel's settings as stored (alert_channels.config) and
// as `monitor alert add` takes them.
type Config struct {
	Kind       string   `json:"kind"`             // webhook, slack or email
	URL        string   `json:"url,omitempty"`    // webhook, slack: where to POST
	Secret     string   `json:"secret,omitempty"` // webhook: the HMAC-SHA256 key
	SMTP       string   `json:"smtp,omitempty"`   // email: host:port
	From       string   `json:"from,omitempty"`
	To         []string `json:"to,omitempty"`
	Username   string   `json:"username,omitempty"`
	Password   string   `json:"password,omitempty"`
	RequireTLS bool     `json:"require_tls,omitempty"`
}

// Channel checks c and returns its channel, connecting through n.
func (c Config) Channel(n Net) (Channel, error) {
	switch c.Kind {
	case "webhook", "slack":
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("alert: %s URL %q: want an absolute http(s) URL without user info", c.Kind, c.URL)
		}
		if c.Kind == "slack" {
			return &Slack{URL: c.URL, Net: n}, nil
		}
		return &Webhook{URL: c.URL, Secret: []byte(c.Secret), Net: n}, nil
	case "email":
		e := &Email{Addr: c.SMTP, From: c.From, To: c.To, Username: c.Username, Password: c.Password,
			RequireTLS: c.RequireTLS, Net: n}
		if err := e.Validate(); err != nil {
			return nil, err
		}
		return e, nil
	case "":
		return nil, errors.New("alert: channel without a kind (webhook, slack or email)")
	default:
		return nil, fmt.Errorf("alert: unknown channel kind %q (webhook, slack or email)", c.Kind)
	}
}

// Destination is the host a channel connects to, for the monitor's
// address check when a person types it.
func (c Config) Destination() string {
	if c.Kind == "email" {
		return c.SMTP
	}
	if u, err := url.Parse(c.URL); err == nil {
		return u.Host
	}
	return ""
}

// String describes the channel without its secret or password.
func (c Config) String() string {
	switch c.Kind {
	case "email":
		return fmt.Sprintf("email to %s via %s", strings.Join(c.To, ", "), c.SMTP)
	default:
		u, err := url.Parse(c.URL)
		if err != nil {
			return c.Kind
		}
		// A Slack webhook's path is its secret.
		return fmt.Sprintf("%s %s://%s/…", c.Kind, u.Scheme, u.Host)
	}
}
