package main

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/atomledger/atomledger/engine"
	"github.com/atomledger/atomledger/instructions"
)

// codeOK is the outcome label of an applied (or replayed) instruction.
const codeOK = "OK"

// metrics are the daemon's Prometheus metrics, in a registry of its own so
// that nothing registered by a library elsewhere leaks into /metrics.
type metrics struct {
	reg          *prometheus.Registry
	instructions *prometheus.CounterVec   // by outcome code
	transfers    *prometheus.CounterVec   // by outcome: committed, pending or a code
	duration     *prometheus.HistogramVec // by route and status
	batchSize    prometheus.Histogram
	// outcomes are the instructions' counters by code, all made at the
	// start: a request finds its own without hashing its label.
	outcomes map[string]prometheus.Counter
}

func newMetrics(rdb redis.UniversalClient) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		instructions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atomledger_instructions_total",
			Help: "Instructions answered, by outcome: OK for a result (replayed or not), else the error code.",
		}, []string{"code"}),
		transfers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "atomledger_transfers_total",
			Help: "Transfers answered, by outcome: committed, pending (not decided in time), else the error code (of the abort, or of the refusal).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "atomledger_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, by route and HTTP status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "status"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "atomledger_batch_instructions",
			Help:    "Number of instructions in each batch request.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
		}),
	}
	// Every outcome an instruction or a transfer can have is exported from
	// the start, at zero, so that rates over it exist before the first
	// occurrence. The codes of the request as a whole (a token, a body size)
	// and of a read are not outcomes.
	m.outcomes = map[string]prometheus.Counter{codeOK: m.instructions.WithLabelValues(codeOK)}
	m.transfers.WithLabelValues(engine.TransferCommitted)
	m.transfers.WithLabelValues(engine.TransferPending)
	for _, code := range instructions.Codes {
		switch code {
		case instructions.CodeUnauthenticated, instructions.CodeForbidden, instructions.CodePayloadTooLarge, instructions.CodeRateLimited, instructions.CodeTransferNotFound:
		default:
			m.outcomes[string(code)] = m.instructions.WithLabelValues(string(code))
			m.transfers.WithLabelValues(string(code))
		}
	}
	m.reg.MustRegister(m.instructions, m.transfers, m.duration, m.batchSize,
		poolCollector{rdb: rdb},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// outcome counts the answer to one instruction.
func (m *metrics) outcome(err error) {
	code := codeOK
	if err != nil {
		code = string(asError(err).Code)
	}
	c, ok := m.outcomes[code]
	if !ok {
		c = m.instructions.WithLabelValues(code)
	}
	c.Inc()
}

// transfer counts the answer to one transfer.
func (m *metrics) transfer(outcome string) {
	m.transfers.WithLabelValues(outcome).Inc()
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.duration.WithLabelValues(route, statusLabel(status)).Observe(d.Seconds())
}

// statusLabels are the texts of the statuses, made once: strconv.Itoa
// allocates for every number past 99.
var statusLabels = func() (l [600]string) {
	for i := range l {
		l[i] = strconv.Itoa(i)
	}
	return l
}()

func statusLabel(status int) string {
	if status >= 0 && status < len(statusLabels) {
		return statusLabels[status]
	}
	return strconv.Itoa(status)
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// poolStat is one figure of the Redis client's connection pool.
type poolStat struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(*redis.PoolStats) float64
}

var poolStats = []poolStat{
	{prometheus.NewDesc("atomledger_redis_pool_hits_total", "Times a free connection was found in the pool.", nil, nil),
		prometheus.CounterValue, func(s *redis.PoolStats) float64 { return float64(s.Hits) }},
	{prometheus.NewDesc("atomledger_redis_pool_misses_total", "Times no free connection was found in the pool.", nil, nil),
		prometheus.CounterValue, func(s *redis.PoolStats) float64 { return float64(s.Misses) }},
	{prometheus.NewDesc("atomledger_redis_pool_timeouts_total", "Times waiting for a connection timed out.", nil, nil),
		prometheus.CounterValue, func(s *redis.PoolStats) float64 { return float64(s.Timeouts) }},
	{prometheus.NewDesc("atomledger_redis_pool_waits_total", "Times a request waited for a connection.", nil, nil),
		prometheus.CounterValue, func(s *redis.PoolStats) float64 { return float64(s.WaitCount) }},
	{prometheus.NewDesc("atomledger_redis_pool_wait_seconds_total", "Time spent waiting for a connection.", nil, nil),
		prometheus.CounterValue, func(s *redis.PoolStats) float64 { return float64(s.WaitDurationNs) / 1e9 }},
	{prometheus.NewDesc("atomledger_redis_pool_stale_conns_total", "Stale connections removed from the pool.", nil, nil),
		prometheus.CounterValue, func(s *redis.PoolStats) float64 { return float64(s.StaleConns) }},
	{prometheus.NewDesc("atomledger_redis_pool_conns", "Connections in the pool.", nil, nil),
		prometheus.GaugeValue, func(s *redis.PoolStats) float64 { return float64(s.TotalConns) }},
	{prometheus.NewDesc("atomledger_redis_pool_idle_conns", "Idle connections in the pool.", nil, nil),
		prometheus.GaugeValue, func(s *redis.PoolStats) float64 { return float64(s.IdleConns) }},
	{prometheus.NewDesc("atomledger_redis_pool_pending_requests", "Requests waiting for a connection now.", nil, nil),
		prometheus.GaugeValue, func(s *redis.PoolStats) float64 { return float64(s.PendingRequests) }},
}

// poolCollector reads the pool statistics of the Redis client (summed over
// the nodes of a cluster) at each scrape.
type poolCollector struct{ rdb redis.UniversalClient }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range poolStats {
		ch <- s.desc
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.rdb.PoolStats()
	for _, s := range poolStats {
		ch <- prometheus.MustNewConstMetric(s.desc, s.kind, s.value(st))
	}
}
