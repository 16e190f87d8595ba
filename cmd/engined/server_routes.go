package main

import "net/http"

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
// Unknown paths and methods get the mux's own 404 and 405.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		var h http.Handler = rt.handle
		if !rt.public {
			h = s.auth.require(rt.scope, h)
		}
		mux.Handle(rt.pattern, s.observe(rt.pattern, h))
	}
	return mux
}
