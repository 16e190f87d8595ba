package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/atomledger/atomledger/cluster"
	"github.com/atomledger/atomledger/instructions"
)

// aclUsers reads the ACL SETUSER lines of docs/security.md, by user.
func aclUsers(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/security.md")
	require.NoError(t, err)
	users := map[string][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "ACL" && f[1] == "SETUSER" {
			users[f[2]] = f[3:]
		}
	}
	return users
}

// TestRedisACL_DocumentedUsersSuffice creates the users docs/security.md
// documents, on every node, and runs each command under its own: serve with
// the relay (and its sweeper and recovery worker) loads the library,
// applies instructions and a transfer, reads them, and carries their events
// to PostgreSQL; serve without --pg applies and transfers; reconcile finds no drift; rebuild of a holder
// in sync writes nothing. None of them is refused a command (NOPERM).
func TestRedisACL_DocumentedUsersSuffice(t *testing.T) {
	needRedis(t)
	ctx := context.Background()
	users := aclUsers(t)
	require.Contains(t, users, "engined-relay")
	require.Contains(t, users, "engined-reconcile")
	require.Contains(t, users, "engined-rebuild")
	r := newLedgerRig(t)
	for user, rules := range users {
		args := []any{"acl", "setuser", user}
		for _, rule := range rules {
			args = append(args, strings.ReplaceAll(rule, ">PASSWORD", ">pw-"+user))
		}
		// Every node, masters and replicas alike.
		require.NoError(t, r.rdb.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error { return c.Do(ctx, args...).Err() }), "%s", user)
	}
	as := func(user string) map[string]string {
		env := map[string]string{"ENGINED_REDIS_USERNAME": user, "ENGINED_REDIS_PASSWORD": "pw-" + user}
		for k, v := range r.env {
			env[k] = v
		}
		return env
	}

	token := newID("token")
	d, addr := listenOnFreeAddr(t, "", as("engined-relay"), func(addr string) []string {
		return []string{"serve", "--listen", addr, "--tokens", token}
	})
	d.url, d.token = "http://"+addr, token
	d.waitHealthy(t)
	require.Eventually(t, func() bool {
		resp, err := d.client.Get(d.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, time.Minute, 50*time.Millisecond, "ready: the library loaded under the relay's user\n%s", d.stderr.String())

	payer, payee := newID("payer"), newID("payee")
	for cluster.HolderSlot(payee) == cluster.HolderSlot(payer) {
		payee = newID("payee")
	}
	d.mustApply(t, instructions.New(newID("open"), payer).Open().Credit("CNY", "100.00"))
	d.mustApply(t, instructions.New(newID("open"), payee).Open())
	st := wantTransfer(t, d.do(t, http.MethodPost, "/v1/transfers", payment(newID("pay"), payer, payee, "30.00")), http.StatusOK)
	require.Equal(t, "committed", string(st.Status), "%+v", st)
	// The relay brings every event of the payer to the ledger.
	payerInLedger := func() {
		var p instructions.State
		strictJSON(t, d.state(t, payer), &p)
		require.Eventually(t, func() bool {
			snaps, err := r.led.Snapshots(ctx, []string{payer}, 0)
			return err == nil && snaps[payer] != nil && snaps[payer].Seq == p.Seq
		}, 2*time.Minute, 50*time.Millisecond, "the payer's events in the ledger")
	}
	payerInLedger()

	// serve without --pg (no relay) under its own user.
	noLedger := as("engined-serve")
	delete(noLedger, "ENGINED_PG_DSN")
	d2, addr2 := listenOnFreeAddr(t, "", noLedger, func(addr string) []string {
		return []string{"serve", "--listen", addr, "--tokens", token}
	})
	d2.url, d2.token = "http://"+addr2, token
	d2.waitHealthy(t)
	d2.mustApply(t, instructions.New(newID("credit"), payee).Credit("CNY", "1.00"))
	st = wantTransfer(t, d2.do(t, http.MethodPost, "/v1/transfers", payment(newID("pay"), payee, payer, "1.00")), http.StatusOK)
	require.Equal(t, "committed", string(st.Status), "%+v", st)
	require.Equal(t, 0, d2.stop(t))
	assert.NotContains(t, d2.stderr.String(), "NOPERM")
	payerInLedger()

	code, out, errOut := runIn(as("engined-reconcile"), "", "reconcile")
	assert.Equal(t, exitOK, code, "reconcile: %s%s", out, errOut)
	code, out, errOut = runIn(as("engined-rebuild"), "", "rebuild", "--holder", payer)
	assert.Equal(t, exitOK, code, "rebuild: %s%s", out, errOut)
	require.Equal(t, 0, d.stop(t))
	assert.NotContains(t, d.stderr.String(), "NOPERM")
}
