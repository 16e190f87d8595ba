package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/atomledger/atomledger/cluster"
)

func TestInfoField_ReadsTheNamedLine(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nredis_mode:cluster\r\n# Memory\r\nused_memory:1048576\r\n"
	assert.Equal(t, "7.0.15", cluster.InfoField(info, "redis_version"))
	assert.Equal(t, "1048576", cluster.InfoField(info, "used_memory"), "the last line")
	assert.Equal(t, "", cluster.InfoField(info, "redis"), "a prefix of a name is not the name")
	assert.Equal(t, "", cluster.InfoField(info, "role"), "absent")
}
