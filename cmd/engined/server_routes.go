package main

import (
	"net/http"
	"strings"

	"github.com/atomledger/atomledger/instructions"
)

// route is one endpoint of the daemon.
type route struct {
	pattern string // method and path, as http.ServeMux takes them
	public  bool   // served without a bearer token
	scope   scope  // what the token needs, if not public
	handle  http.HandlerFunc
}

// routes lists every endpoint; docs/openapi.yaml describes the same set (a
// test checks it). Everything under /v1/ needs a bearer token with the
// route's scope: read to read, write to apply.
func (s *server) routes() []route {
	return []route{
		{pattern: "POST /v1/instructions", scope: scopeWrite, handle: s.applyOne},
		{pattern: "POST /v1/instructions/batch", scope: scopeWrite, handle: s.applyBatch},
		{pattern: "GET /v1/holders/{holder}", scope: scopeRead, handle: s.holder},
		{pattern: "GET /v1/holders/{holder}/events", scope: scopeRead, handle: s.events},
		{pattern: "POST /v1/holders/{holder}/sweep", scope: scopeAdmin, handle: s.sweepHot},
		{pattern: "GET /v1/holders/{holder}/instructions/{id}", scope: scopeRead, handle: s.instruction},
		{pattern: "GET /v1/events", scope: scopeRead, handle: s.feed},
		{pattern: "POST /v1/transfers", scope: scopeWrite, handle: s.postTransfer},
		{pattern: "GET /v1/transfers/{id}", scope: scopeRead, handle: s.getTransfer},
		{pattern: "GET /healthz", public: true, handle: s.healthz},
		{pattern: "GET /readyz", public: true, handle: s.readyz},
		{pattern: "GET /metrics", public: true, handle: s.metrics.handler().ServeHTTP},
	}
}

// handler registers every route on a new mux. Each is observed (request log,
// latency) before it is authenticated, so that refused requests show too.
// A path no route has, or a method its routes do not take, is answered
// with the error object (NOT_FOUND, METHOD_NOT_ALLOWED with Allow), under
// /v1/ only once the token is checked, as every route there: without one,
// no caller learns which paths and methods exist.
func (s *server) handler() http.Handler {
	mux, known := http.NewServeMux(), http.NewServeMux()
	for _, rt := range s.routes() {
		var h http.Handler = rt.handle
		if !rt.public {
			h = s.auth.require(rt.scope, h)
		}
		mux.Handle(rt.pattern, s.observe(rt.pattern, h))
		known.Handle(rt.pattern, h)
	}
	none := noRoute(known)
	mux.Handle("/", s.observe("/", none))
	mux.Handle("/v1/", s.observe("/v1/", s.auth.require(scopeRead|scopeWrite|scopeAdmin, none)))
	return mux
}

// noRoute answers a request that no route of known takes: 405 with the
// methods that the path's routes take, 404 when none has the path.
func noRoute(known *http.ServeMux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := known.Handler(probe); pattern != "" {
				allow = append(allow, m)
				if m == http.MethodGet {
					allow = append(allow, http.MethodHead) // as the mux serves GET's routes
				}
			}
		}
		if len(allow) == 0 {
			writeError(w, instructions.Errorf(instructions.CodeNotFound, instructions.NoOp, "no route %s", r.URL.Path), false)
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, instructions.Errorf(instructions.CodeMethodNotAllowed, instructions.NoOp,
			"%s takes %s, not %s", r.URL.Path, strings.Join(allow, ", "), r.Method), false)
	}
}
