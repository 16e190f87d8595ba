package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/atomledger/atomledger/instructions"
)

// newLogger writes JSON lines to w from level up.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// redisLogger passes the messages of go-redis itself (failed dials, ...) to
// the daemon's log, at warn, so that every line of the log is JSON.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client", "message", fmt.Sprintf(format, v...))
}

// parseLevel reads --log-level.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// exchange records what the request log and the metrics need to know of an
// answer: its status, the code of an error answer, and details the handler
// adds. It never holds a header or a body of the request.
type exchange struct {
	http.ResponseWriter
	status int
	code   instructions.Code // of an error answer
	// rejected counts the entries of a batch answered with an error, by code.
	rejected map[instructions.Code]int
	// remembered counts the instructions whose rejection the script
	// recorded (the rejection limit's unit).
	remembered int
	attrs      []slog.Attr // the handler's details; the first two are kept in few
	few        [2]slog.Attr
}

func (x *exchange) WriteHeader(status int) {
	if x.status == 0 {
		x.status = status
	}
	x.ResponseWriter.WriteHeader(status)
}

func (x *exchange) Write(b []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	return x.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// note adds attributes to the request's log line, when w is an exchange.
func note(w http.ResponseWriter, attrs ...slog.Attr) {
	if x, ok := w.(*exchange); ok {
		if x.attrs == nil {
			x.attrs = x.few[:0]
		}
		x.attrs = append(x.attrs, attrs...)
	}
}

// observe logs one line per request and measures its latency. The line is
// at debug for a success or a rejection, warn for a wrong token or a token
// without the route's scope, error for a server error
// (a batch: by its worst entry), and carries the error code. Only the
// method, the route, the path and the remote address are taken from the
// request: never a header, so never a token.
func (s *server) observe(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		x := &exchange{ResponseWriter: w}
		next.ServeHTTP(x, r)
		if x.status == 0 {
			x.status = http.StatusOK
		}
		d := time.Since(start)
		s.metrics.observe(route, x.status, d)

		level := levelOf(x.status)
		for code := range x.rejected {
			level = max(level, levelOf(httpStatus(code, false)))
		}
		if !s.log.Enabled(r.Context(), level) {
			return
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("route", route),
			slog.String("path", r.URL.Path),
			slog.Int("status", x.status),
			slog.Float64("duration_ms", float64(d.Microseconds())/1000),
			slog.String("remote", r.RemoteAddr),
		}
		if x.code != "" {
			attrs = append(attrs, slog.String("code", string(x.code)))
		}
		if len(x.rejected) > 0 {
			codes := make([]string, 0, len(x.rejected))
			for c, n := range x.rejected {
				codes = append(codes, fmt.Sprintf("%s:%d", c, n))
			}
			slices.Sort(codes)
			attrs = append(attrs, slog.String("rejected", strings.Join(codes, ",")))
		}
		s.log.LogAttrs(r.Context(), level, "request", append(attrs, x.attrs...)...)
	})
}

// levelOf is the log level of an answer with that status. A business
// rejection (4xx) is the client's affair, counted in the metrics, not a
// warning: WARN stays for what an operator may need to act on, such as a
// wrong bearer token. A token over its rate limit (429) is logged at INFO,
// with its name, for the runbook of AtomledgerTokenLimited.
func levelOf(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return slog.LevelWarn
	case status == http.StatusTooManyRequests:
		return slog.LevelInfo
	default:
		return slog.LevelDebug
	}
}
