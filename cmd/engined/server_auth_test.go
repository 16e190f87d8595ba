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
		a.require(next).ServeHTTP(w, r)
		assert.Equal(t, want, w.Code, "%q", header)
	}
}

func TestLoadTokens(t *testing.T) {
	file := writeFile(t, t.TempDir(), "tokens", "# comment\nfile-1\n\n  file-2\t\n")
	c, err := parseConfig(t, map[string]string{"ENGINED_TOKENS": "env-1", "ENGINED_TOKENS_FILE": file})
	require.NoError(t, err)
	tokens, err := loadTokens(c)
	require.NoError(t, err)
	assert.Equal(t, []string{"env-1", "file-1", "file-2"}, tokens)

	bad := writeFile(t, t.TempDir(), "bad", "ok\nnot ok\n")
	c, err = parseConfig(t, nil, "--tokens-file", bad)
	require.NoError(t, err)
	_, err = loadTokens(c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2")
	assert.NotContains(t, err.Error(), "not ok", "never quotes a token")
}
