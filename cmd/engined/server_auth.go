package main

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/atomledger/atomledger/instructions"
)

// scope is what a token may do; a token holds a set of them.
type scope uint8

const (
	scopeRead  scope = 1 << iota // state, statements, lookups, transfers' state, the feed
	scopeWrite                   // instructions, batches, transfers
	scopeAdmin                   // what operators do over HTTP
	allScopes  = scopeRead | scopeWrite | scopeAdmin
)

// scopeNames are the scopes as the tokens file spells them: scopeNames[i]
// is the scope 1<<i.
var scopeNames = []string{"read", "write", "admin"}

func (s scope) String() string {
	var names []string
	for i, name := range scopeNames {
		if s&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, ",")
}

// parseScopes reads a comma-separated list of scopes.
func parseScopes(v string) (scope, error) {
	var s scope
	for _, name := range strings.Split(v, ",") {
		i := slices.Index(scopeNames, name)
		if i < 0 {
			// Not quoted: fields swapped, it is the token.
			return 0, errors.New("the scopes are not read, write or admin, comma-separated (NAME SCOPES TOKEN)")
		}
		s |= 1 << i
	}
	return s, nil
}

// token is one accepted bearer token: its name (what logs show), the
// SHA-256 digest of its secret, its scopes and its limits.
type token struct {
	name   string
	digest [sha256.Size]byte
	scopes scope
	limits limits
}

func newToken(name, secret string, scopes scope) token {
	return token{name: name, digest: sha256.Sum256([]byte(secret)), scopes: scopes}
}

// authenticator checks the bearer token of a request against the accepted
// tokens, and its scopes against the route's. It keeps only the tokens'
// SHA-256 digests: comparing digests of equal length in constant time leaks
// neither a token's content nor its length, which subtle.ConstantTimeCompare
// on the tokens themselves would. The set may be replaced while requests
// are served (SIGHUP).
type authenticator struct {
	tokens atomic.Pointer[[]token]
	limits limiter // the tokens' buckets, by name
}

// newAuthenticator accepts secrets as bare tokens: every scope, named by
// their place in the list.
func newAuthenticator(secrets []string) *authenticator {
	a := &authenticator{}
	a.set(bareTokens("tokens", secrets, limits{}))
	return a
}

// bareTokens gives secrets every scope and the limits l, named source:1,
// source:2, ...
func bareTokens(source string, secrets []string, l limits) []token {
	tokens := make([]token, len(secrets))
	for i, secret := range secrets {
		tokens[i] = newToken(source+":"+strconv.Itoa(i+1), secret, allScopes)
		tokens[i].limits = l
	}
	return tokens
}

// set replaces the accepted tokens.
func (a *authenticator) set(tokens []token) { a.tokens.Store(&tokens) }

// open reports whether the authenticator lets every request through: only
// `serve --dev` without tokens builds one.
func (a *authenticator) open() bool { return len(*a.tokens.Load()) == 0 }

// lookup compares tok with every token, without stopping at a match, so
// that the time taken does not tell which token matched.
func (a *authenticator) lookup(tok string) (token, bool) {
	d := sha256.Sum256([]byte(tok))
	tokens := *a.tokens.Load() // one set for the whole lookup, whatever SIGHUP does meanwhile
	found := -1
	for i, t := range tokens {
		if subtle.ConstantTimeCompare(d[:], t.digest[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return token{}, false
	}
	return tokens[found], true
}

// require answers 401 UNAUTHENTICATED, with a WWW-Authenticate challenge,
// to a request without a valid bearer token, 403 FORBIDDEN to one whose
// token lacks the scope need, 429 RATE_LIMITED to one over its token's
// limits (server_limits.go), and passes the others to next. The request's
// log line names the token, never its secret.
func (a *authenticator) require(need scope, next http.Handler) http.Handler {
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
		var t token
		if ok {
			t, ok = a.lookup(tok)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="atomledger", error="invalid_token"`)
				writeError(w, instructions.Errorf(instructions.CodeUnauthenticated, instructions.NoOp, "invalid bearer token"), false)
				return
			}
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer realm="atomledger"`)
			writeError(w, instructions.Errorf(instructions.CodeUnauthenticated, instructions.NoOp,
				"missing bearer token: send Authorization: Bearer <token>"), false)
			return
		}
		note(w, slog.String("token", t.name))
		if t.scopes&need == 0 {
			writeError(w, instructions.Errorf(instructions.CodeForbidden, instructions.NoOp,
				"token %q has the scopes %q; this route needs %q", t.name, t.scopes, need), false)
			return
		}
		a.limits.serve(w, r, t, need, next)
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

// loadTokens gives the tokens of --tokens (bare: every scope) and those of
// --tokens-file. A line of the file is a bare token (every scope, named
// tokens-file:LINE), or NAME SCOPES TOKEN, the scopes comma-separated (read,
// write, admin), then optionally rate-limit=N and rejection-limit=N in place
// of --rate-limit and --rejection-limit; blank lines and lines starting with
// # are ignored. Names and tokens are unique. Errors name the file and the
// line, never a token.
func loadTokens(c *Config) ([]token, error) {
	def := limits{requests: c.RateLimit, rejections: c.RejectionLimit}
	tokens := bareTokens("tokens", c.Tokens, def)
	for i, t := range tokens {
		if err := unique(tokens[:i], t); err != nil {
			return nil, fmt.Errorf("--tokens: %s: %w", t.name, err)
		}
	}
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
		t, err := parseTokenLine(line, n, def)
		if err == nil {
			err = unique(tokens, t)
		}
		if err != nil {
			return nil, fmt.Errorf("--tokens-file %s line %d: %w", c.TokensFile, n, err)
		}
		tokens = append(tokens, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--tokens-file %s: %w", c.TokensFile, err)
	}
	return tokens, nil
}

// parseTokenLine reads line n of the tokens file, def the limits of a token
// that names none. Its errors never quote the token.
func parseTokenLine(line string, n int, def limits) (token, error) {
	fields := strings.Fields(line)
	switch len(fields) {
	case 1:
		if err := checkToken(line); err != nil {
			return token{}, err
		}
		t := newToken("tokens-file:"+strconv.Itoa(n), line, allScopes)
		t.limits = def
		return t, nil
	case 3, 4, 5:
		if err := checkToken(fields[0]); err != nil {
			return token{}, errors.New("a name contains a control or a non-ASCII character")
		}
		scopes, err := parseScopes(fields[1])
		if err != nil {
			return token{}, err
		}
		if err := checkToken(fields[2]); err != nil {
			return token{}, err
		}
		t := newToken(fields[0], fields[2], scopes)
		t.limits, err = tokenLimits(fields[3:], def)
		return t, err
	default:
		return token{}, errors.New("want a token alone, or NAME SCOPES TOKEN [rate-limit=N] [rejection-limit=N] separated by spaces")
	}
}

// unique refuses t if its name or its secret is one of tokens'.
func unique(tokens []token, t token) error {
	for _, o := range tokens {
		switch {
		case o.name == t.name:
			return fmt.Errorf("the name %q is taken already", t.name)
		case o.digest == t.digest:
			return fmt.Errorf("the same token as %q", o.name)
		}
	}
	return nil
}
