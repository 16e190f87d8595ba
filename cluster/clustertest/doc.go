// Package clustertest runs a local Redis Cluster (and a Sentinel
// deployment) of real redis-server processes, for tests and for engined dev,
// as net/http/httptest sits beside net/http. Libraries never import it.
//
// Start runs real redis-server processes on free ports of 127.0.0.1, joins
// them into a cluster with CLUSTER MEET, ADDSLOTSRANGE and REPLICATE, and
// returns once every node agrees on the slot map and every replica is in
// sync. Kill, WaitFailover and Restart drive a failover the way a crash
// would. Nodes time out after one second, so a failover takes about two.
//
// Tests use StartForTest (or StartForMain from TestMain). When the
// environment variable ATOMLEDGER_TEST_REDIS names the nodes of a running
// cluster, they use that cluster instead of starting one.
//
// # Caveats
//
// The local cluster keeps no data on disk (no RDB, no AOF): a restarted node
// comes back empty and resyncs from its master, and data not yet replicated
// when a master was killed is lost, as in production with asynchronous
// replication. On Linux the servers die with the process that started them,
// even if it never calls Stop.
package clustertest
