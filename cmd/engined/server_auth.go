package main

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/atomledger/atomledger/instructions"
)

// authenticator checks the bearer token of a request against the configured
// tokens. It keeps only their SHA-256 digests: comparing digests of equal
// length in constant time leaks neither a token's content nor its length,
// which subtle.ConstantTimeCompare on the tokens themselves would.
type authenticator struct {
	digests [][sha256.Size]byte
}

func newAuthenticator(tokens []string) *authenticator {
	a := &authenticator{}
	for _, t := range tokens {
		a.digests = append(a.digests, sha256.Sum256([]byte(t)))
	}
	return a
}

// open reports whether the authenticator lets every request through: only
// `serve --dev` without tokens builds one.
func (a *authenticator) open() bool { return len(a.digests) == 0 }

// valid compares tok with every token, without stopping at a match, so that
// the time taken does not tell which token matched.
func (a *authenticator) valid(tok string) bool {
	d := sha256.Sum256([]byte(tok))
	match := 0
	for i := range a.digests {
		match |= subtle.ConstantTimeCompare(d[:], a.digests[i][:])
	}
	return match == 1
}

// require answers 401 UNAUTHENTICATED, with a WWW-Authenticate challenge,
// to a request without a valid bearer token, and passes the others to next.
func (a *authenticator) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.open() {
			next.ServeHTTP(w, r)
			return
		}
		// Two Authorization headers are refused: a proxy in front may
		// check one and this daemon the other.
		var tok string
		ok := false
		if h := r.Header.Values("Authorization"); len(h) == 1 {
			tok, ok = bearerToken(h[0])
		}
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", `Bearer realm="atomledger"`)
			writeError(w, instructions.Errorf(instructions.CodeUnauthenticated, instructions.NoOp,
				"missing bearer token: send Authorization: Bearer <token>"), false)
		case !a.valid(tok):
			w.Header().Set("WWW-Authenticate", `Bearer realm="atomledger", error="invalid_token"`)
			writeError(w, instructions.Errorf(instructions.CodeUnauthenticated, instructions.NoOp, "invalid bearer token"), false)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header; the scheme is case-insensitive (RFC 9110). Only the spaces and
// tabs HTTP allows around the token are taken off, not every Unicode space
// (strings.TrimSpace would take U+0085 and U+00A0 too), so that only a
// configured token byte for byte passes.
func bearerToken(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.Trim(tok, " \t")
	return tok, tok != ""
}

// loadTokens gives the tokens of --tokens and those of --tokens-file: one a
// line, blank lines and lines starting with # ignored. Errors name the file
// and the line, never a token.
func loadTokens(c *Config) ([]string, error) {
	tokens := append([]string(nil), c.Tokens...)
	if c.TokensFile == "" {
		return tokens, nil
	}
	f, err := os.Open(c.TokensFile)
	if err != nil {
		return nil, fmt.Errorf("--tokens-file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := checkToken(line); err != nil {
			return nil, fmt.Errorf("--tokens-file %s line %d: %w", c.TokensFile, n, err)
		}
		tokens = append(tokens, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--tokens-file %s: %w", c.TokensFile, err)
	}
	return tokens, nil
}
