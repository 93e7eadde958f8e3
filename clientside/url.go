package clientside

import (
	"fmt"
	"net/url"
	"strings"
)

// ElicitURL is a checked URL-mode elicitation: what the person is shown
// before consenting.
type ElicitURL struct {
	// URL is the full URL, opened only with consent.
	URL string
	// Host is the URL's host (with port), the part a person should check.
	Host string
}

// ParseElicitURL accepts an absolute http or https URL without userinfo
// or control characters; anything else is declined with the reason.
func ParseElicitURL(raw string) (ElicitURL, error) {
	if strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return ElicitURL{}, fmt.Errorf("the URL contains control characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ElicitURL{}, fmt.Errorf("the URL is malformed")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return ElicitURL{}, fmt.Errorf("the URL's scheme %q is not http or https", u.Scheme)
	}
	if u.User != nil {
		return ElicitURL{}, fmt.Errorf("the URL carries a user name or password")
	}
	if u.Host == "" {
		return ElicitURL{}, fmt.Errorf("the URL has no host")
	}
	return ElicitURL{URL: u.String(), Host: u.Host}, nil
}
