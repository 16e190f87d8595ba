package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":       "abc",
		"bearer abc":       "abc",
		"BEARER  abc ":     "abc",
		"Bearer":           "",
		"Bearer ":          "",
		"Basic abc":        "",
		"Bearer abc\u00a0": "abc\u00a0", // only HTTP's own spaces and tabs are taken off
		"abc":              "",
		"":                 "",
	} {
		tok, ok := bearerToken(header)
		assert.Equal(t, want, tok, "%q", header)
		assert.Equal(t, want != "", ok, "%q", header)
	}
}

func TestAuthenticator_RequiresOneOfTheTokens(t *testing.T) {
	a := newAuthenticator([]string{"first", "second"})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for header, want := range map[string]int{
		"Bearer first":  http.StatusNoContent,
		"Bearer second": http.StatusNoContent,
		"Bearer firs":   http.StatusUnauthorized,
		"Bearer first2": http.StatusUnauthorized,
		"":              http.StatusUnauthorized,
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/holders/u1", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		w := httptest.NewRecorder()
		a.require(scopeRead, next).ServeHTTP(w, r)
		assert.Equal(t, want, w.Code, "%q", header)
	}
}

// TestAuthenticator_Scopes checks each token's scopes against the route's:
// 403 FORBIDDEN names the token, never its secret.
func TestAuthenticator_Scopes(t *testing.T) {
	a := newAuthenticator(nil)
	a.set([]token{newToken("reader", "s-read", scopeRead), newToken("writer", "s-write", scopeWrite),
		newToken("ops", "s-admin", scopeAdmin), newToken("tokens:1", "s-all", allScopes)})
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, tt := range []struct {
		secret string
		need   scope
		want   int
	}{
		{"s-read", scopeRead, http.StatusNoContent},
		{"s-read", scopeWrite, http.StatusForbidden},
		{"s-write", scopeWrite, http.StatusNoContent},
		{"s-write", scopeRead, http.StatusForbidden},
		{"s-admin", scopeRead, http.StatusForbidden},
		{"s-admin", scopeAdmin, http.StatusNoContent},
		{"s-all", scopeRead, http.StatusNoContent},
		{"s-all", scopeWrite, http.StatusNoContent},
		{"s-all", scopeAdmin, http.StatusNoContent},
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/holders/u1", nil)
		r.Header.Set("Authorization", "Bearer "+tt.secret)
		w := httptest.NewRecorder()
		a.require(tt.need, next).ServeHTTP(w, r)
		require.Equal(t, tt.want, w.Code, "%s for %s", tt.secret, tt.need)
		if tt.want == http.StatusForbidden {
			assert.Contains(t, w.Body.String(), `"code":"FORBIDDEN"`)
			assert.NotContains(t, w.Body.String(), tt.secret)
			assert.Contains(t, w.Body.String(), `this route needs \"`+tt.need.String()+`\"`)
		}
	}
}

func TestLoadTokens(t *testing.T) {
	file := writeFile(t, t.TempDir(), "tokens", "# comment\nfile-1\n\n  file-2\t\nci read s-ci\nbilling read,write  s-billing\nops admin,read s-ops\n")
	c, err := parseConfig(t, map[string]string{"ENGINED_TOKENS": "env-1", "ENGINED_TOKENS_FILE": file})
	require.NoError(t, err)
	tokens, err := loadTokens(c)
	require.NoError(t, err)
	assert.Equal(t, []token{
		newToken("tokens:1", "env-1", allScopes),
		newToken("tokens-file:2", "file-1", allScopes),
		newToken("tokens-file:4", "file-2", allScopes),
		newToken("ci", "s-ci", scopeRead),
		newToken("billing", "s-billing", scopeRead|scopeWrite),
		newToken("ops", "s-ops", scopeAdmin|scopeRead),
	}, tokens, "a bare token has every scope, as it had before scopes")

	for _, tt := range []struct{ name, content, want string }{
		{"a space in a bare token", "ok\nnot ok\n", "line 2"},
		{"an unknown scope", "ci read,delete s-ci\n", "the scopes are not read, write or admin"},
		{"no scope", "ci , s-ci\n", "the scopes are not read, write or admin"},
		{"four fields", "ci read s-ci more\n", "NAME SCOPES TOKEN"},
		{"a name twice", "ci read s-ci\nci write s-other\n", `the name "ci" is taken already`},
		{"a token twice", "ci read s-ci\nbot write s-ci\n", `the same token as "ci"`},
		{"a --tokens token again in the file", "s-env\n", `the same token as "tokens:1"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := writeFile(t, t.TempDir(), "bad", tt.content)
			c, err := parseConfig(t, map[string]string{"ENGINED_TOKENS": "s-env"}, "--tokens-file", bad)
			require.NoError(t, err)
			_, err = loadTokens(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			for _, secret := range []string{"not ok", "s-ci", "s-other", "s-env"} {
				assert.NotContains(t, err.Error(), secret, "never quotes a token")
			}
		})
	}
}
