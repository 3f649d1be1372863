package flinkrun

import (
	"fmt"
	"regexp"
)

// flinkRefusedKey matches the message with which Flink refuses a
// configuration value it cannot read (flink-core release-2.2.1,
// Configuration.getOptional: "Could not parse value '%s' for key '%s'.",
// or "Could not parse value for key '%s'." for a sensitive key).
var flinkRefusedKey = regexp.MustCompile(`Could not parse value (?:'([^']*)' )?for key '([^']+)'`)

// ConfigurationRefusal is the key (and value) of the first configuration
// entry Flink refused in the cluster's logs, as an error naming the key;
// nil when Flink refused none.
func (c *FlinkCluster) ConfigurationRefusal() error {
	for _, log := range []string{"jobmanager.log", "taskmanager.log"} {
		for _, line := range c.LogLines(log) {
			if m := flinkRefusedKey.FindStringSubmatch(line); m != nil {
				return fmt.Errorf("testbed: Flink refused the configuration key %q (value %q) at start (%s): %s", m[2], m[1], log, line)
			}
		}
	}
	return nil
}
