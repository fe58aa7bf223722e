package telemetry

import (
	"testing"

	"go.uber.org/goleak"
)

// The batcher and the exporters' connections are stopped by Shutdown.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
