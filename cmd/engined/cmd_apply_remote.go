package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/atomledger/atomledger/instructions"
)

// serverURL reads --server, the base URL of a daemon; nil when there is
// none.
func serverURL(server string) (*url.URL, error) {
	if server == "" {
		return nil, nil
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--server %q: want a URL such as http://127.0.0.1:8080", server)
	}
	return u, nil
}

// answer is a daemon's reply to one instruction or transfer.
type answer struct {
	// body is a JSON object: a result or a transfer's state, or, when
	// rejected, an object with an "error" (an error object, or the state of
	// an aborted transfer).
	body     []byte
	rejected bool
	err      error // no usable answer: the outcome is unknown
}

// post sends an instruction or a transfer to a daemon. Without an answer
// that is a result or a state (2xx) or an object with an "error" (any other
// status), the outcome is unknown: UNAVAILABLE, as when Redis itself does
// not answer.
func post(ctx context.Context, endpoint, token string, body []byte) answer {
	unknown := func(format string, args ...any) answer {
		return answer{err: instructions.Errorf(instructions.CodeUnavailable, instructions.NoOp,
			"outcome unknown, apply the same file again: "+format, args...)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return unknown("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return unknown("%v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return unknown("read the answer: %v", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return unknown("the daemon answered %s without a JSON object", resp.Status)
	}
	_, rejected := obj["error"]
	if rejected == (resp.StatusCode/100 == 2) {
		return unknown("the daemon answered %s with an unexpected body", resp.Status)
	}
	return answer{body: data, rejected: rejected}
}

// printAnswer prints a daemon's answer as apply prints its own outcome, and
// gives the exit status; transfer tells that the answer is a transfer's
// state, which exits 0 only when committed.
func printAnswer(c cli, a answer, transfer bool) int {
	if a.err != nil {
		return printOutcome(c, nil, a.err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(a.body), "", "  "); err != nil {
		return printOutcome(c, nil, err)
	}
	out.WriteByte('\n')
	if _, err := c.stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(c.stderr, "engined apply: write the outcome: %v\n", err)
	}
	if a.rejected {
		return exitRejected
	}
	if transfer {
		var st struct{ Status string }
		_ = json.Unmarshal(a.body, &st)
		return transferExit(st.Status)
	}
	return exitOK
}
