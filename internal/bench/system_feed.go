package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	neturl "net/url"
	"slices"
	"sync"
	"time"
)

// The feed in the system part (docs/feed.md): with Settings.SystemWebhook
// the daemon delivers the ledger's feed to a webhook of the bench's own
// during every phase, and each event's lag is the time it arrived less its
// Redis server time; after the phases a consumer reads the whole feed from
// its start through GET /v1/events, a page of 1,000 at a time.

// SystemFeed is what the system part measured of the feed.
type SystemFeed struct {
	WebhookEvents   int     `json:"webhook_events"` // delivered to the webhook, the same event counted again if sent again
	WebhookLagP50Ms float64 `json:"webhook_lag_p50_ms"`
	WebhookLagP99Ms float64 `json:"webhook_lag_p99_ms"`
	WebhookLagMaxMs float64 `json:"webhook_lag_max_ms"`
	WebhookMissing  int     `json:"webhook_missing"` // events of the feed the webhook had not got 60 s after the last phase
	ReadEvents      int     `json:"read_events"`     // the whole feed, read once
	ReadPerSec      float64 `json:"read_per_sec"`
}

// webhookSecret is the webhook's signing secret: the bench does not check
// signatures (the daemon's tests do), it times deliveries.
const webhookSecret = "bench-webhook-secret-0123456789"

// feedProbe is the bench's webhook receiver.
type feedProbe struct {
	srv  *http.Server
	url  string
	mu   sync.Mutex
	lags []float64 // ms, per event delivered
	seen map[string]bool
}

func newFeedProbe() (*feedProbe, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &feedProbe{url: "http://" + l.Addr().String() + "/hook", seen: map[string]bool{}}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.receive), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

func (p *feedProbe) receive(w http.ResponseWriter, r *http.Request) {
	now := time.Now().UnixMilli()
	var page struct {
		Events []struct {
			Cursor string `json:"cursor"`
			TsMs   int64  `json:"ts_ms"`
		} `json:"events"`
	}
	if err := json.NewDecoder(r.Body).Decode(&page); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	for _, ev := range page.Events {
		p.lags = append(p.lags, float64(now-ev.TsMs))
		p.seen[ev.Cursor] = true
	}
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (p *feedProbe) close() { _ = p.srv.Close() }

// measureFeed reads the whole feed through the daemon at url and, with a
// probe, waits (60 s at most) for it to have every event, then reports.
func measureFeed(ctx context.Context, client *http.Client, url string, p *feedProbe) (SystemFeed, error) {
	var out SystemFeed
	var cursors []string
	start := time.Now()
	for after := ""; ; {
		page, err := feedPage(ctx, client, url, after)
		if err != nil {
			return out, err
		}
		for _, ev := range page.Events {
			cursors = append(cursors, ev.Cursor)
		}
		if len(page.Events) == 0 {
			break
		}
		after = page.Next
	}
	out.ReadEvents = len(cursors)
	out.ReadPerSec = float64(len(cursors)) / time.Since(start).Seconds()
	if p == nil {
		return out, nil
	}
	missing := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := 0
		for _, c := range cursors {
			if !p.seen[c] {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(time.Minute); missing() > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	out.WebhookMissing = missing()
	p.mu.Lock()
	lags := slices.Clone(p.lags)
	p.mu.Unlock()
	out.WebhookEvents = len(lags)
	if len(lags) > 0 {
		slices.Sort(lags)
		at := func(q float64) float64 { return lags[min(len(lags)-1, int(q*float64(len(lags))))] }
		out.WebhookLagP50Ms, out.WebhookLagP99Ms, out.WebhookLagMaxMs = at(0.5), at(0.99), lags[len(lags)-1]
	}
	return out, nil
}

type feedPageBody struct {
	Events []struct {
		Cursor string `json:"cursor"`
	} `json:"events"`
	Next string `json:"next"`
}

func feedPage(ctx context.Context, client *http.Client, url, after string) (feedPageBody, error) {
	var page feedPageBody
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/events?limit=1000&after="+neturl.QueryEscape(after), nil)
	if err != nil {
		return page, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return page, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return page, fmt.Errorf("GET /v1/events: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return page, err
	}
	if len(page.Events) > 0 && page.Next == "" {
		return page, errors.New("GET /v1/events: a page without its next cursor")
	}
	return page, nil
}
