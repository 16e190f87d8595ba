package main

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// readyTimeout bounds one readiness check: a probe must not hang.
const readyTimeout = 3 * time.Second

// healthz is GET /healthz: 200 while the process serves at all.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, status{Status: "ok"})
}

// readyz is GET /readyz: 200 when the library has been loaded on every master,
// every master answers PING now and, with --min-replica-acks, no master's
// writes have gone unconfirmed by its replicas, else 503 UNAVAILABLE with the
// reason.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.ready.check(ctx); err != nil {
		writeError(w, instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp, "not ready: %s", withClusterHint(err.Error(), "; ")), false)
		return
	}
	writeJSON(w, http.StatusOK, status{Status: "ready"})
}

// readiness remembers a successful engine.Load: a master that loses the
// library later (a flush, a new master) gets it again from the engine on its
// first "Function not found", so only a failed Load is tried again.
type readiness struct {
	eng    *engine.Engine
	loaded atomic.Bool
}

func (rd *readiness) check(ctx context.Context) error {
	if !rd.loaded.Load() {
		if err := rd.eng.Load(ctx); err != nil {
			return err
		}
		rd.loaded.Store(true)
	}
	if err := rd.eng.Ping(ctx); err != nil {
		return err
	}
	// A master whose replicas do not acknowledge gets every write answered
	// UNAVAILABLE (applied, unconfirmed): as good as down for a client.
	return rd.eng.CheckReplicas(ctx)
}
