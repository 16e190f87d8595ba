package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/atomledger/atomledger/instructions"
)

// halfLoad offers op at rate for d, open loop (openLoop); seq numbers the
// operations on from the closed loop's.
func halfLoad(ctx context.Context, op func(context.Context, int64) error, seq *atomic.Int64, rate float64, d time.Duration, workers int) (HalfLoad, error) {
	out := HalfLoad{Rate: round(rate), Seconds: round(d.Seconds())}
	n := int(rate * d.Seconds())
	if n == 0 {
		return out, nil
	}
	var failed atomic.Int64
	var ec errCount
	lat, took := openLoop(n, rate, workers, func(int) {
		if err := op(ctx, seq.Add(1)-1); err != nil {
			failed.Add(1)
			ec.add(err)
		}
	})
	if err := ctx.Err(); err != nil {
		return out, err
	}
	out.Ops, out.Achieved = int64(n), round(float64(n)/took.Seconds())
	slices.Sort(lat)
	out.P50Ms, out.P99Ms = round(percentile(lat, 50)), round(percentile(lat, 99))
	out.Errors = failed.Load()
	if _, first := ec.result(); first != nil {
		out.FirstError = first.Error()
	}
	return out, nil
}

// workload is the operation of a phase: the k-th of the run, as one
// request (two for hold_settle), nil when it was applied.
func (r *sysRun) workload(name string, left *moneyOut) (func(context.Context, int64) error, error) {
	h := r.holders
	n := int64(len(h))
	payer := func(k int64) string { return h[k%n] }
	// Half the holders away: the 32 operations in flight never share one.
	payee := func(k int64) string { return h[(k+n/2)%n] }
	tag := r.e.prefix + "-" + name + "-"
	switch name {
	case phaseDebit:
		return func(ctx context.Context, k int64) error {
			id := tag + strconv.FormatInt(k, 10)
			err := r.postInstruction(ctx, instructions.New(id, payer(k)).Debit("CNY", sysDebitCNY))
			countApplied(err, &left.debits, &left.uncertain)
			return err
		}, nil
	case phaseP2P:
		return func(ctx context.Context, k int64) error {
			var from, to instructions.Instruction
			return r.postTransfer(ctx, instructions.Transfer{ID: tag + strconv.FormatInt(k, 10), Parts: []instructions.Part{
				{Holder: payer(k), Ops: from.Debit("CNY", sysPayCNY).Ops},
				{Holder: payee(k), Ops: to.Credit("CNY", sysPayCNY).Ops},
			}})
		}, nil
	case phaseHoldSettle:
		return func(ctx context.Context, k int64) error {
			id := tag + strconv.FormatInt(k, 10)
			if err := r.postInstruction(ctx, instructions.New(id, payer(k)).Freeze("CNY", sysPayCNY, id, 0)); err != nil {
				return err
			}
			var from, to instructions.Instruction
			return r.postTransfer(ctx, instructions.Transfer{ID: id, Parts: []instructions.Part{
				{Holder: payer(k), Ops: from.SettleLeg(id, "CNY", sysPayCNY).Ops},
				{Holder: payee(k), Ops: to.Credit("CNY", sysPayCNY).Ops},
			}})
		}, nil
	case phaseCheckout:
		return func(ctx context.Context, k int64) error {
			if k/n >= sysCoupons {
				return errNoCoupons
			}
			coupon := "c-" + strconv.FormatInt(k/n, 10)
			err := r.postInstruction(ctx, checkoutWith(tag+strconv.FormatInt(k, 10), payer(k), int(k), coupon))
			countApplied(err, &left.checkouts, &left.uncertain)
			return err
		}, nil
	case phaseFloor:
		return func(ctx context.Context, k int64) error {
			return r.post(ctx, FloorPath+payer(k), []byte(`{"amount":1}`), http.StatusOK)
		}, nil
	}
	return nil, fmt.Errorf("unknown workload %q", name)
}

// countApplied adds an applied instruction to ok, and one whose outcome is
// unknown to uncertain.
func countApplied(err error, ok, uncertain *atomic.Int64) {
	var st statusError
	switch {
	case err == nil:
		ok.Add(1)
	case !errors.As(err, &st) || st.status >= 500:
		uncertain.Add(1)
	}
}

// statusError is an answer of another status than the one expected.
type statusError struct {
	status int
	body   string
}

func (e statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

func (r *sysRun) postInstruction(ctx context.Context, in instructions.Instruction) error {
	body, err := instructions.Encode(in)
	if err != nil {
		return err
	}
	return r.post(ctx, "/v1/instructions", body, http.StatusOK)
}

// postTransfer counts a transfer done when it is committed and complete
// (200 and "complete": true); anything else fails, and one that may still
// be under way (pending, committed with parts left to the recovery worker,
// no answer) is counted unfinished: the money check waits for it.
func (r *sysRun) postTransfer(ctx context.Context, t instructions.Transfer) error {
	body, err := instructions.EncodeTransfer(t)
	if err != nil {
		return err
	}
	answer, err := r.postFor(ctx, "/v1/transfers", body, http.StatusOK)
	if err != nil {
		// No answer or a server error: it may be under way as well.
		var st statusError
		if !errors.As(err, &st) || st.status == http.StatusAccepted || st.status >= 500 {
			r.unfinished.Add(1)
		}
		return err
	}
	var state struct {
		Complete bool `json:"complete"`
	}
	if err := json.Unmarshal(answer, &state); err != nil {
		return fmt.Errorf("transfer %s: %w", t.ID, err)
	}
	if !state.Complete {
		r.unfinished.Add(1)
		return fmt.Errorf("transfer %s: committed, parts left unfinished", t.ID)
	}
	return nil
}

func (r *sysRun) post(ctx context.Context, path string, body []byte, want int) error {
	_, err := r.postFor(ctx, path, body, want)
	return err
}

// postFor posts body and returns the answer's body, or an error if its
// status is not want.
func (r *sysRun) postFor(ctx context.Context, path string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.d.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, statusError{status: resp.StatusCode, body: string(bytes.TrimSpace(b))}
	}
	return b, nil
}
