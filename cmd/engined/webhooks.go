package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/atomledger/atomledger/internal/worker"
	"github.com/atomledger/atomledger/ledger"
)

// The headers of a webhook's POST (docs/feed.md, Webhooks): the Unix time
// in seconds when it was signed, and "v1=" and the hex HMAC-SHA256, keyed
// by --webhook-secret, of the timestamp, a ".", and the body.
const (
	webhookTimestampHeader = "Atomledger-Timestamp"
	webhookSignatureHeader = "Atomledger-Signature"
)

// Timing of the webhooks: events per POST, how often to look for new ones
// at the end of the feed, how long a receiver may take, and the longest
// wait between two tries while it fails.
const (
	webhookBatch      = 100
	webhookPoll       = 500 * time.Millisecond
	webhookTimeout    = 30 * time.Second
	webhookMaxBackoff = time.Minute
)

// webhookSignature signs a body sent at ts (Unix seconds).
func webhookSignature(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// webhook delivers the feed to one URL, at least once: a batch is sent
// until the receiver answers 2xx, and the webhook's cursor in the ledger
// moves only then. One process at a time delivers a webhook (its lease).
type webhook struct {
	url, secret string
	name        string // the URL without credentials or query, for logs and metrics
	led         *ledger.Ledger
	client      *http.Client
	log         *slog.Logger

	events, failures atomic.Int64
	pendingMs        atomic.Int64 // server time of the oldest event not delivered yet; 0: none
}

func newWebhook(rawURL, secret string, led *ledger.Ledger, log *slog.Logger) *webhook {
	u, _ := url.Parse(rawURL) // checked by the configuration
	name := u.Scheme + "://" + u.Host + u.Path
	// A redirect is not followed: it is an answer other than 2xx, so the
	// batch is sent again. Followed, a 303 turned the POST into a GET whose
	// 2xx counted the batch delivered, and a 307 carried the batch and its
	// signature to another host.
	return &webhook{url: rawURL, secret: secret, name: name, led: led, log: log.With("webhook", name),
		client: &http.Client{Timeout: webhookTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}}
}

// register exports the webhook's figures, labelled by its place among the
// --webhook URLs (from 1) and its name.
func (w *webhook) register(reg prometheus.Registerer, n int) {
	if reg == nil {
		return
	}
	labels := prometheus.Labels{"webhook": strconv.Itoa(n), "url": w.name}
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "atomledger_webhook_events_total", ConstLabels: labels,
			Help: "Feed events the webhook's receiver took (a batch sent again counts again)."},
			func() float64 { return float64(w.events.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "atomledger_webhook_failures_total", ConstLabels: labels,
			Help: "POSTs of the webhook that failed (no answer, or not 2xx), retried."},
			func() float64 { return float64(w.failures.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "atomledger_webhook_lag_ms", ConstLabels: labels,
			Help: "Age of the oldest feed event the webhook's receiver has not taken yet, ms (0: none waits)."},
			func() float64 {
				if ms := w.pendingMs.Load(); ms > 0 {
					return float64(max(time.Now().UnixMilli()-ms, 0))
				}
				return 0
			}))
}

// run delivers until ctx is done, taking the lease whenever no other
// process holds it.
func (w *webhook) run(ctx context.Context) {
	for ctx.Err() == nil {
		lease, err := w.led.LeaseWebhook(ctx, w.url)
		switch {
		case err != nil:
			w.log.Warn("webhook: the ledger did not answer, retrying", "error", err)
			worker.Sleep(ctx, time.Second)
		case lease == nil:
			// Another process delivers it, and tells its lag: this one's
			// would be what it saw when it last held the lease, growing.
			w.pendingMs.Store(0)
			worker.Sleep(ctx, 10*webhookPoll)
		default:
			err := w.deliver(ctx, lease)
			lease.Release()
			if ctx.Err() == nil {
				// Stopped with events perhaps waiting: the lag counts from
				// now at least, so that a webhook stopped every time (a
				// cursor the feed refuses) shows, and its alert fires.
				w.pendingMs.CompareAndSwap(0, time.Now().UnixMilli())
				w.log.Warn("webhook: delivery stopped, starting again", "error", err)
				worker.Sleep(ctx, time.Second)
			}
		}
	}
}

// deliver follows the feed from the webhook's cursor, a batch at a time.
func (w *webhook) deliver(ctx context.Context, lease *ledger.WebhookLease) error {
	after, err := lease.Cursor(ctx)
	if err != nil {
		return err
	}
	q := ledger.FeedQuery{After: after, Limit: webhookBatch}
	return followFeed(ctx, w.led, q, true, webhookPoll, w.log, func(page ledger.FeedPage) error {
		w.pendingMs.Store(page.Events[0].TsMs)
		body, err := json.Marshal(page)
		if err != nil {
			return err
		}
		for backoff := time.Second; ; backoff = min(2*backoff, webhookMaxBackoff) {
			err := w.post(ctx, body)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.failures.Add(1)
			w.log.Warn("webhook: the receiver did not take the batch, retrying", "error", err, "in", backoff,
				"events", len(page.Events), "after", after)
			worker.Sleep(ctx, backoff)
		}
		if err := lease.Advance(ctx, page.Next, len(page.Events)); err != nil {
			return err
		}
		after = page.Next
		w.events.Add(int64(len(page.Events)))
		w.pendingMs.Store(0)
		return nil
	}, func(after string) {
		// An empty page: nothing committed after the cursor, or events
		// the feed holds back behind a transaction still open, for which
		// the receiver waits all the same.
		if ms, err := w.led.Waiting(ctx, after); err == nil {
			w.pendingMs.Store(ms)
		}
	})
}

// post sends one signed batch; nil once the receiver answered 2xx.
func (w *webhook) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhookTimestampHeader, strconv.FormatInt(ts, 10))
	req.Header.Set(webhookSignatureHeader, webhookSignature(w.secret, ts, body))
	resp, err := w.client.Do(req)
	if err != nil {
		// The client's error quotes the URL, whose query and user may be
		// credentials: the log names the webhook by w.name.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("POST: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}
