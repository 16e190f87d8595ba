package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/atomledger/atomledger/cluster/clustertest"
)

// The files of deploy/, which an operator loads into Prometheus and Grafana.
const (
	deployDashboard  = "../../deploy/grafana/atomledger.json"
	deployRules      = "../../deploy/prometheus/alerts.yml"
	deployRulesTests = "../../deploy/prometheus/alerts_test.yml"
	deployReadme     = "../../deploy/README.md"
)

// externalMetrics are the names the dashboard and the rules may use that the
// daemon does not export, with who does.
var externalMetrics = map[string]string{
	"up":            "Prometheus, for every scrape target",
	"probe_success": "the blackbox exporter, probing /readyz",
}

// ruleFile is the rule-file format of Prometheus, strictly: an unknown field
// (a misspelt "annotations", "for" at the wrong level) is an error, as it is
// to Prometheus.
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readRules(t *testing.T) ruleFile {
	t.Helper()
	data, err := os.ReadFile(deployRules)
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var rf ruleFile
	require.NoError(t, dec.Decode(&rf), deployRules)
	return rf
}

// dashboard is the part of a Grafana dashboard that holds queries.
type dashboard struct {
	Title      string           `json:"title"`
	UID        string           `json:"uid"`
	Panels     []dashboardPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"` // a string, or {"query": "..."} in newer Grafana
		} `json:"list"`
	} `json:"templating"`
}

type dashboardPanel struct {
	Title   string           `json:"title"`
	Type    string           `json:"type"`
	Panels  []dashboardPanel `json:"panels"` // a collapsed row's
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// dashboardQueries returns every PromQL query of the dashboard, keyed by
// where it is, Grafana's variables left in.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(deployDashboard)
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(data, &d), deployDashboard)
	require.NotEmpty(t, d.UID)
	queries := map[string]string{}
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type != "row" {
				require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
			}
			for i, tg := range p.Targets {
				require.NotEmpty(t, tg.Expr, "panel %q query %d", p.Title, i)
				queries[fmt.Sprintf("panel %q query %d", p.Title, i)] = tg.Expr
			}
		}
	}
	walk(d.Panels)
	// label_values(SELECTOR, LABEL): SELECTOR is the query.
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*[A-Za-z_]\w*\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		sub := labelValues.FindStringSubmatch(q)
		require.NotNil(t, sub, "variable %q: label_values(selector, label) expected, got %q", v.Name, q)
		queries[fmt.Sprintf("variable %q", v.Name)] = sub[1]
	}
	return queries
}

// ruleQueries returns every expression of the alert rules, keyed by rule.
func ruleQueries(t *testing.T) map[string]string {
	t.Helper()
	queries := map[string]string{}
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			queries["rule "+r.Alert+r.Record] = r.Expr
		}
	}
	return queries
}

// What metricNames strips from a PromQL expression before it looks for
// names: Grafana's variables, strings, label matchers, ranges and subqueries,
// and the label lists of grouping and vector matching.
var (
	promVariable = regexp.MustCompile(`\$(?:\{[^}]*\}|\w+)`)
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promLabels   = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promKeywords = []string{"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
		"offset", "bool", "inf", "nan", "atan2"}
)

// metricNames returns the metric names a PromQL expression selects: the
// identifiers left once the parts that hold none are stripped, other than
// keywords, functions (a name followed by "(") and the letters of a number
// or a duration.
func metricNames(expr string) []string {
	for _, re := range []*regexp.Regexp{promVariable, promString, promMatchers, promRange, promLabels} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, loc := range promIdent.FindAllStringIndex(expr, -1) {
		name := expr[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsRune("0123456789.", rune(expr[loc[0]-1])) {
			continue // the e of 1e3, the m of 5m
		}
		if slices.Contains(promKeywords, strings.ToLower(name)) {
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(expr[loc[1]:], " \t\n"), "(") {
			continue
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

func TestDeploy_MetricNamesOfAQuery(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`sum by (code) (rate(atomledger_instructions_total{job="$job",code!~"OK|rate(x)"}[$__rate_interval]))`,
			[]string{"atomledger_instructions_total"}},
		{`histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{x="}"}[5m])))`, []string{"a_bucket"}},
		{`a / on (job) group_left (instance) max without (x) (b) > bool 1e3 and c offset 1h unless d[5m:1m]`,
			[]string{"a", "b", "c", "d"}},
		{"deriv(max by (job) (backlog{job=\"a\"})[15m:1m]) > 0\n  and max by (job) (backlog) > 10000", []string{"backlog"}},
		{`absent(atomledger_relay_backlog{job="atomledger"}) or vector(Inf) or NaN`, []string{"atomledger_relay_backlog"}},
	} {
		assert.Equal(t, c.want, metricNames(c.expr), "%s", c.expr)
	}
}

// families returns the metric families of a /metrics page, by name, with
// their type.
func families(page string) map[string]string {
	fams := map[string]string{}
	for _, line := range strings.Split(page, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			fams[f[2]] = f[3]
		}
	}
	return fams
}

// exportedMetrics returns the names of the series a /metrics page can have:
// a histogram's _bucket, _sum and _count (never its own name), a summary's
// own name (its quantiles), _sum and _count, any other family's own name.
func exportedMetrics(page string) map[string]bool {
	names := map[string]bool{}
	for name, typ := range families(page) {
		switch typ {
		case "histogram":
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case "summary":
			names[name], names[name+"_sum"], names[name+"_count"] = true, true, true
		default:
			names[name] = true
		}
	}
	return names
}

// unknownMetrics lists, by query, the names of queries that are neither in
// exported nor external.
func unknownMetrics(queries map[string]string, exported map[string]bool) []string {
	var bad []string
	for where, q := range queries {
		for _, name := range metricNames(q) {
			if !exported[name] && externalMetrics[name] == "" {
				bad = append(bad, fmt.Sprintf("%s: %s", where, name))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func TestDeploy_UnknownMetricIsReported(t *testing.T) {
	exported := exportedMetrics("# TYPE atomledger_relay_lag_ms gauge\n# TYPE d histogram\n")
	assert.Equal(t, []string{"rule A: atomledger_relay_lag_msec", "rule B: d"}, unknownMetrics(map[string]string{
		"rule A": `max(atomledger_relay_lag_msec) > 1 and up == 0`,
		"rule B": `rate(d_count[5m]) / rate(d[5m])`,
		"rule C": `histogram_quantile(0.5, rate(d_bucket[1m])) + atomledger_relay_lag_ms + probe_success`,
	}, exported))
}

// TestDeploy_DashboardAndRulesNameOnlyWhatTheDaemonExports scrapes a daemon
// that runs every worker, the relay too, and checks every name the dashboard
// and the alert rules select against its /metrics; and that the dashboard
// shows every atomledger_ figure of the page.
func TestDeploy_DashboardAndRulesNameOnlyWhatTheDaemonExports(t *testing.T) {
	needRedis(t)
	t.Parallel()
	// A cluster of its own: the relay takes every outbox of its cluster.
	r := newLedgerRigOn(t, clustertest.StartForTest(t, clustertest.Options{Masters: 1}))
	// And a webhook, for its figures.
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	env := maps.Clone(r.env)
	env["ENGINED_WEBHOOKS"], env["ENGINED_WEBHOOK_SECRET"] = hook.URL, "a-secret-of-16-chars"
	d := startServe(t, env, "--redis", strings.Join(r.c.Addrs(), ","), "--redis-cluster")

	// The relay's figures and the webhook's are registered once the ledger
	// is open, one after the other: a scrape may fall between them.
	var page string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a := d.doWith(t, http.MethodGet, "/metrics", "", nil)
		require.Equal(t, http.StatusOK, a.status)
		page = string(a.body)
		ready := strings.Contains(page, "# TYPE atomledger_relay_lag_ms ") && strings.Contains(page, "# TYPE atomledger_webhook_lag_ms ")
		if ready || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	exported := exportedMetrics(page)
	require.True(t, exported["atomledger_relay_lag_ms"], "the relay's figures within two minutes:\n%s", page)
	require.True(t, exported["atomledger_webhook_lag_ms"], "the webhook's figures with the relay's:\n%s", page)
	require.True(t, exported["atomledger_http_request_duration_seconds_bucket"], "the probes of /healthz were observed")

	dash, rules := dashboardQueries(t), ruleQueries(t)
	assert.Empty(t, unknownMetrics(dash, exported), "the dashboard names metrics the daemon does not export")
	assert.Empty(t, unknownMetrics(rules, exported), "the rules name metrics the daemon does not export")

	// A histogram is shown when any of its series is.
	fams := families(page)
	shown := map[string]bool{}
	for _, q := range dash {
		for _, name := range metricNames(q) {
			shown[name] = true
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && fams[base] == "histogram" {
					shown[base] = true
				}
			}
		}
	}
	for name := range fams {
		if strings.HasPrefix(name, "atomledger_") {
			assert.True(t, shown[name], "the dashboard has no panel for %s", name)
		}
	}
}

// severities are the severity labels the README explains.
var severities = []string{"warning", "critical"}

// promDuration is a duration as Prometheus writes them (5m, 1h30m).
var promDuration = regexp.MustCompile(`^(?:[0-9]+(?:ms|s|m|h|d|w|y))+$`)

// alertName is a valid metric name, which Prometheus requires of an alert's.
var alertName = regexp.MustCompile(`^[A-Za-z_:][A-Za-z0-9_:]*$`)

// TestDeploy_RulesAreWellFormed checks what Prometheus requires of a rule
// file beyond PromQL (TestDeploy_Promtool checks that), and that
// deploy/README.md explains every alert.
func TestDeploy_RulesAreWellFormed(t *testing.T) {
	rf := readRules(t)
	readme, err := os.ReadFile(deployReadme)
	require.NoError(t, err)
	require.NotEmpty(t, rf.Groups)
	groups, alerts := map[string]bool{}, map[string]bool{}
	for _, g := range rf.Groups {
		assert.NotEmpty(t, g.Name, "a group needs a name")
		assert.False(t, groups[g.Name], "group %q twice", g.Name)
		groups[g.Name] = true
		assert.True(t, g.Interval == "" || promDuration.MatchString(g.Interval), "group %q interval %q", g.Name, g.Interval)
		assert.NotEmpty(t, g.Rules, "group %q has no rule", g.Name)
		for i, r := range g.Rules {
			where := fmt.Sprintf("group %q rule %d (%s)", g.Name, i, r.Alert+r.Record)
			require.True(t, r.Alert != "" && r.Record == "", "%s: alert rules only, each named", where)
			assert.Regexp(t, alertName, r.Alert, where)
			assert.False(t, alerts[r.Alert], "%s: the alert is named twice", where)
			alerts[r.Alert] = true
			assert.NotEmpty(t, strings.TrimSpace(r.Expr), "%s: expr", where)
			assert.True(t, r.For == "" || promDuration.MatchString(r.For), "%s: for %q is no duration", where, r.For)
			assert.Contains(t, severities, r.Labels["severity"], "%s: severity", where)
			assert.NotEmpty(t, r.Annotations["summary"], "%s: summary", where)
			assert.NotEmpty(t, r.Annotations["description"], "%s: description", where)
			assert.True(t, strings.Contains(string(readme), "| `"+r.Alert+"` |"), "%s: deploy/README.md has no row for it", where)
		}
	}
}

// TestDeploy_Promtool runs Prometheus's own checks (promtool, which make deps
// installs; without it the test fails): the rules parse (PromQL, templates), their unit tests in
// alerts_test.yml pass, and every dashboard query parses as PromQL.
//
// Not Prometheus's Go parser (model/rulefmt): importing it, for a test alone,
// tripled the module graph (160 to 474 edges, go.sum 82 to 270 lines), made
// go mod tidy fetch cloud SDKs and Kubernetes modules, and raised the
// versions of golang.org/x/sys, x/text, x/term, x/sync and
// prometheus/common that the daemon links.
func TestDeploy_Promtool(t *testing.T) {
	if testing.Short() {
		t.Skip("runs promtool; skipped under -short")
	}
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "promtool is not installed (make deps installs it; Debian: apt-get install prometheus)")
	run := func(t *testing.T, args ...string) {
		t.Helper()
		out, err := exec.Command(promtool, args...).CombinedOutput()
		assert.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	}
	t.Run("the alert rules parse", func(t *testing.T) { run(t, "check", "rules", deployRules) })
	t.Run("the alerts fire as their unit tests say", func(t *testing.T) { run(t, "test", "rules", deployRulesTests) })
	t.Run("every dashboard query parses", func(t *testing.T) {
		// Each query becomes a recording rule, Grafana's variables given
		// values as Grafana would.
		vars := strings.NewReplacer("$__rate_interval", "1m", "$__interval", "1m", "$job", "atomledger", "$instance", ".*")
		var rules []map[string]string
		for where, q := range dashboardQueries(t) {
			if !strings.HasPrefix(where, "variable") {
				rules = append(rules, map[string]string{"record": "dashboard:query", "expr": vars.Replace(q)})
			}
		}
		data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
		require.NoError(t, err)
		file := filepath.Join(t.TempDir(), "dashboard.yml")
		require.NoError(t, os.WriteFile(file, data, 0o644))
		run(t, "check", "rules", file)
	})
}
