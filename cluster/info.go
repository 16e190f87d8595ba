package cluster

import "strings"

// InfoField returns the value of field name in the text of an INFO or
// CLUSTER INFO reply ("" if it has none): the engine reads redis_version
// with it, the relay connected_slaves, the test harness cluster_state, and
// tools that read INFO beside the engine use it too.
func InfoField(info, name string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
