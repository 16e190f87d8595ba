package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each test here was written against a defect an adversarial pass found:
// its comment says what happened before the fix, the test what holds now.

// A tokens-file line with its fields in the wrong order, NAME TOKEN SCOPES
// (the easiest slip when writing the file by hand), is refused, but the
// refusal quotes the secret: parseScopes reads the token as a scope list and
// answers `unknown scope "<the token>"`. serve prints that on stderr at
// start, and SIGHUP logs it at error level ("SIGHUP: the tokens stay the
// ones in use"), so the secret lands in the daemon's logs.
// The contract: the error names the file, the line and the field by
// its place, never its text, as tokenLimits already does for the fields
// after the token ("names the field by its place, never quoting it").
// docs/security.md, "Tokens and their scopes": "The request log names the
// token ..., never its secret, and so does every error about the file (it
// names the line)"; server_auth.go loadTokens: "Errors name the file and the
// line, never a token". Defect: server_auth.go parseScopes quotes the field
// (`unknown scope %q`), reached from parseTokenLine.
func TestSecurityAdversary_ATokenInTheScopesPlaceIsNotQuoted(t *testing.T) {
	secret := newID("s3cret")
	file := writeFile(t, t.TempDir(), "tokens", "checkout "+secret+" read,write\n")

	// The function itself.
	_, err := loadTokens(&Config{TokensFile: file})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1")
	assert.NotContains(t, err.Error(), secret, "an error about the tokens file quotes the token")

	// What an operator sees: engined serve refusing to start.
	d := startEngined(t, "", nil, "serve", "--listen", freeAddr(t), "--redis", "127.0.0.1:1", "--tokens-file", file)
	select {
	case <-d.done:
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "engined serve did not refuse the tokens file")
	}
	assert.Contains(t, d.stderr.String(), "line 1")
	assert.NotContains(t, d.stderr.String(), secret, "engined serve prints the token on stderr")
}

// A keyword/value --pg DSN (libpq's other syntax, which pgx accepts) whose
// password is written with spaces around '=' ("password = ...", as libpq's
// own docs allow) and which PostgreSQL's driver cannot use (here an unknown
// sslmode) makes serve log, every retry, pgx's ParseConfigError, which quotes
// the whole connection string: pgx's redaction only masks "password=..."
// written without spaces, so the password is in the daemon's log in clear.
// The contract: the log says the DSN is refused without quoting it
// (--pg is a secret option: config.go "never echo the value, not even in an
// error message"; Config.LogValue shows only pg_set).
// The defect was in: workers.go openLedger logs `"err", err` from ledger.Open as is
// (and the statement reader through the same function); nothing strips the
// connection string pgconn.ParseConfigError carries, nor is the DSN checked
// at start with a static message. Both are now: a string pgx cannot parse is
// refused at start (exit 2), and ledger.Open never quotes one.
func TestSecurityAdversary_ThePGPasswordNeverReachesTheLog(t *testing.T) {
	needRedis(t)
	password := newID("pgpw")
	// A string pgx cannot parse (its error quotes it): refused at start.
	bad := engined(buildEngined(t), "serve", "--dev").
		withEnv("ENGINED_PG_DSN", "host=127.0.0.1 port=1 user=engined dbname=ledger password = "+password+" sslmode=bogus").run(t)
	assert.Equal(t, exitUsage, bad.code, "stderr: %s", bad.stderr)
	assert.Contains(t, bad.stderr, "the connection string cannot be parsed")
	assert.NotContains(t, bad.stderr, password, "the PostgreSQL password is in the refusal")
	// One it parses, of a server that is not there: retried, logged.
	dsn := "host=127.0.0.1 port=1 user=engined dbname=ledger password = " + password
	d := startServe(t, map[string]string{"ENGINED_PG_DSN": dsn})
	require.Eventually(t, func() bool {
		return strings.Contains(d.stderr.String(), "ledger unavailable")
	}, 2*time.Minute, 20*time.Millisecond, "serve never logged the ledger as unavailable:\n%s", d.stderr.String())
	assert.NotContains(t, d.stderr.String(), password, "the PostgreSQL password is in the daemon's log")
}

// The same token twice in --tokens (ENGINED_TOKENS), "a,a", is accepted as
// two tokens, tokens:1 and tokens:2, while the same token given twice any
// other way (twice in the file, or in --tokens and the file) is refused at
// start. What should happen: refused like the others, naming the two places
// and quoting neither. docs/security.md, "Tokens and their scopes": "Names
// and tokens are unique across both sources". Defect: server_auth.go
// loadTokens checks unique() only for the file's lines; bareTokens (the
// --tokens values) never checks them against one another.
func TestSecurityAdversary_TheSameTokenTwiceInTokensIsRefused(t *testing.T) {
	secret := newID("s3cret")
	c, err := parseConfig(t, map[string]string{"ENGINED_TOKENS": secret + "," + secret})
	require.NoError(t, err)
	tokens, err := loadTokens(c)
	require.Error(t, err, "two tokens accepted with one secret: %v", securityAdversaryNames(tokens))
	assert.NotContains(t, err.Error(), secret)
}

func securityAdversaryNames(tokens []token) []string {
	var n []string
	for _, t := range tokens {
		n = append(n, t.name)
	}
	return n
}

// A secret flag's value that the shell split in two (a password or a token
// list with a space in it, unquoted: --redis-password $PW, --tokens a, b)
// leaves its second half as a stray argument, and the refusal quotes it on
// stderr: `engined serve: unexpected argument "<the rest of the secret>"`.
// The contract: the refusal says an argument is unexpected without
// quoting what follows a secret flag, as the configuration's own errors do
// for secret options (config.go, option.secret: "never echo the value, not
// even in an error message"; docs/security.md: the password goes in the
// environment, "not a flag, which the process list shows", i.e. flags are
// known to leak, errors should not add to it). Defect: flags.go
// commandFlags.parse, `unexpected argument %q` with f.fs.Arg(0).
func TestSecurityAdversary_TheRestOfASplitSecretIsNotQuoted(t *testing.T) {
	rest := newID("s3cret")
	for _, args := range [][]string{
		{"serve", "--redis-password", "half", rest},
		{"serve", "--tokens", "tok-1,", rest},
		{"serve", "--webhook-secret", "0123456789abcdef", rest},
		{"apply", "-f", "-", "--server", "http://127.0.0.1:1", "--token", "half", rest},
	} {
		var out, errb bytes.Buffer
		code := run(args, cli{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb,
			getenv: func(string) string { return "" }})
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Contains(t, errb.String(), "unexpected argument", "%v", args)
		assert.NotContains(t, errb.String(), rest, "%v: the stderr quotes the rest of the secret", args)
	}
}

// A token over its limit is answered 429 RATE_LIMITED, but at the default
// --log-level (info, what deploy/ runs) the daemon writes no log line for
// it: observe logs a 429 at debug. What should happen: the refusal is in the
// request log with "code":"RATE_LIMITED" and the token's name, as
// docs/security.md ("Limits per token": "A refusal's message names the token
// and its limit, and its request log line carries "code":"RATE_LIMITED" with
// the token's name") and the AtomledgerTokenLimited runbook in
// deploy/README.md ("the request log has its 429s") tell operators to look
// for; serve's usage says the request log is "warn for a client error".
// The defect was in: server_logging.go levelOf puts every 4xx but 401/403 at debug,
// 429 included.
func TestSecurityAdversary_ARateLimitedTokenLeavesALogLine(t *testing.T) {
	needRedis(t)
	d := startServe(t, nil, "--rate-limit", "1")
	a, _ := firstRefusal(t, func() reply { return d.do(t, http.MethodGet, "/v1/holders/"+newID("h"), "") })
	wantRateLimited(t, a, "tokens:1")
	logged := func() bool {
		for _, line := range strings.Split(d.stderr.String(), "\n") {
			if strings.Contains(line, `"code":"RATE_LIMITED"`) && strings.Contains(line, `"token":"tokens:1"`) {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for !logged() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assert.True(t, logged(), "no request log line for the 429 at the default log level:\n%s", d.stderr.String())
}

// A Redis URL with its password (redis://:PASSWORD@host:6379, the form most
// Redis tools take in their REDIS_URL) given to --redis or
// ENGINED_REDIS_ADDRS is refused, and the refusal quotes it twice, password
// included: `ENGINED_REDIS_ADDRS (--redis) "redis://:<pw>@host:6379":
// address redis://:<pw>@host:6379: too many colons in address`. What should
// happen: refused without echoing the userinfo (the way checkWebhookURL
// "never quotes the URL, which may hold credentials"), ideally pointing to
// --redis-username and ENGINED_REDIS_PASSWORD (docs/security.md: "the
// password in ENGINED_REDIS_PASSWORD (the environment, not a flag, which
// the process list shows)"). Defect: config.go configFlags.config quotes a
// non-secret option's bad value (`%s %q: %w`), and checkHostPort returns
// net.SplitHostPort's error, which quotes the address again.
func TestSecurityAdversary_ARedisURLsPasswordIsNotQuoted(t *testing.T) {
	password := newID("redispw")
	_, err := parseConfig(t, map[string]string{"ENGINED_REDIS_ADDRS": "redis://:" + password + "@10.0.0.5:6379"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ENGINED_REDIS_ADDRS")
	assert.NotContains(t, err.Error(), password, "the configuration error quotes the Redis password")
}
