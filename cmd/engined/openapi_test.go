package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// openAPI is the part of docs/openapi.yaml the tests read.
type openAPI struct {
	OpenAPI    string                                 `yaml:"openapi"`
	Paths      map[string]map[string]openAPIOperation `yaml:"paths"`
	Components struct {
		Schemas map[string]struct {
			Enum []string `yaml:"enum"`
		} `yaml:"schemas"`
	} `yaml:"components"`
}

type openAPIOperation struct {
	Security  *[]map[string][]string `yaml:"security"`
	Responses map[string]any         `yaml:"responses"`
}

func readOpenAPI(t *testing.T) openAPI {
	t.Helper()
	data, err := os.ReadFile("../../docs/openapi.yaml")
	require.NoError(t, err)
	var doc openAPI
	require.NoError(t, yaml.Unmarshal(data, &doc))
	require.True(t, strings.HasPrefix(doc.OpenAPI, "3.0."), "OpenAPI 3.0, got %q", doc.OpenAPI)
	return doc
}

// testServer is a server whose Redis is never reached: enough to route.
func testServer(t *testing.T) *server {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	return newServer(engine.New(rdb, nil), rdb, []string{"t"}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
}

func TestOpenAPI_DocumentsEveryRouteAndNoOther(t *testing.T) {
	doc := readOpenAPI(t)
	s := testServer(t)

	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	var served []string
	for _, rt := range s.routes() {
		served = append(served, rt.pattern)
	}
	slices.Sort(documented)
	slices.Sort(served)
	assert.Equal(t, served, documented)

	// The mux itself answers each documented operation with its route.
	mux := s.handler().(*http.ServeMux)
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		path = strings.NewReplacer("{holder}", "u1", "{id}", "trade-1").Replace(path)
		r := httptest.NewRequest(method, path, nil)
		_, pattern := mux.Handler(r)
		assert.Equal(t, op, pattern, "the mux routes %s", op)
	}
}

func TestOpenAPI_PublicRoutesAreTheUnauthenticatedOnes(t *testing.T) {
	doc := readOpenAPI(t)
	for _, rt := range testServer(t).routes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		op := doc.Paths[path][strings.ToLower(method)]
		documentedPublic := op.Security != nil && len(*op.Security) == 0
		assert.Equal(t, rt.public, documentedPublic, "%s: security in the document", rt.pattern)
		assert.Equal(t, strings.HasPrefix(path, "/v1/"), !rt.public, "%s: a token is needed exactly under /v1/", rt.pattern)
		if !rt.public {
			assert.Contains(t, op.Responses, "401", "%s documents 401", rt.pattern)
			assert.Contains(t, op.Responses, "403", "%s documents 403", rt.pattern)
			assert.Contains(t, op.Responses, "429", "%s documents 429 (a token's limits)", rt.pattern)
		}
	}
}

func TestOpenAPI_ErrorCodesAreTheContracts(t *testing.T) {
	doc := readOpenAPI(t)
	var want []string
	for _, c := range instructions.Codes {
		want = append(want, string(c))
	}
	assert.Equal(t, want, doc.Components.Schemas["Code"].Enum)
}

func TestOpenAPI_InstructionsDocumentEveryStatusOfTheTable(t *testing.T) {
	doc := readOpenAPI(t)
	want := []string{"200"}
	for _, row := range statusTable {
		switch row.code {
		case instructions.CodeTransferNotFound, instructions.CodeInstructionNotFound:
			continue // only a read of a transfer, or of an instruction by id, answers it
		case instructions.CodeNotFound, instructions.CodeMethodNotAllowed:
			continue // no route's answer: a path or a method that none takes
		}
		if s := strconv.Itoa(row.status); !slices.Contains(want, s) {
			want = append(want, s)
		}
	}
	var got []string
	for status := range doc.Paths["/v1/instructions"]["post"].Responses {
		got = append(got, status)
	}
	assert.ElementsMatch(t, want, got)
}

// A transfer answers what an instruction does, its aborted state with the
// status of its error, and 202 while it is pending.
func TestOpenAPI_TransfersDocumentTheirStatuses(t *testing.T) {
	doc := readOpenAPI(t)
	var got []string
	for status := range doc.Paths["/v1/transfers"]["post"].Responses {
		got = append(got, status)
	}
	assert.ElementsMatch(t, []string{"200", "202", "400", "401", "403", "409", "413", "422", "429", "500", "503"}, got)
	got = nil
	for status := range doc.Paths["/v1/transfers/{id}"]["get"].Responses {
		got = append(got, status)
	}
	assert.ElementsMatch(t, []string{"200", "400", "401", "403", "404", "429", "500", "503"}, got)
}

// A path no route has, or a method its routes do not take, is answered with
// the error object (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED with Allow), and
// under /v1/ only once the token is checked: without one, 401, so that no
// caller maps the routes. The mux answered plain text before the token.
func TestRoutes_UnknownPathsAndMethodsAnswerTheErrorObjectAfterTheToken(t *testing.T) {
	h := testServer(t).handler()
	for _, tt := range []struct {
		method, path, token string
		status              int
		code, allow         string
	}{
		{http.MethodDelete, "/v1/holders/u1", "", 401, "UNAUTHENTICATED", ""},
		{http.MethodGet, "/v1/nothing", "", 401, "UNAUTHENTICATED", ""},
		{http.MethodGet, "/v1/nothing", "wrong", 401, "UNAUTHENTICATED", ""},
		{http.MethodDelete, "/v1/holders/u1", "t", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{http.MethodGet, "/v1/instructions", "t", 405, "METHOD_NOT_ALLOWED", "POST"},
		{http.MethodPut, "/v1/transfers/x1", "t", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{http.MethodGet, "/v1/nothing", "t", 404, "NOT_FOUND", ""},
		{http.MethodGet, "/v1/holders/u1/", "t", 404, "NOT_FOUND", ""},
		{http.MethodGet, "/nothing", "", 404, "NOT_FOUND", ""},
		{http.MethodPost, "/healthz", "", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
	} {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.token != "" {
			r.Header.Set("Authorization", "Bearer "+tt.token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, tt.status, w.Code, "%s %s", tt.method, tt.path)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"), "%s %s", tt.method, tt.path)
		assert.Contains(t, w.Body.String(), `"code":"`+tt.code+`"`, "%s %s", tt.method, tt.path)
		assert.Equal(t, tt.allow, w.Header().Get("Allow"), "%s %s", tt.method, tt.path)
	}
}
