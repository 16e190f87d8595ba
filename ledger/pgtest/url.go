package pgtest

import (
	"net/url"
	"strings"
)

// parseURL parses dsn when it is a URL; nil for keyword/value DSNs.
func parseURL(dsn string) (*url.URL, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return nil, nil
	}
	return url.Parse(dsn)
}
