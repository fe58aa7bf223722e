package config

// Telemetry is the telemetry section: what codemode-mcp tells an
// operator's observability stack. Metrics is its only part here; the
// traces' settings are fields beside it.
type Telemetry struct {
	// Metrics is telemetry.metrics.
	Metrics Metrics
}

// telemetry decodes the telemetry section.
func (d *decoder) telemetry(n *node, fp fieldPath, t *Telemetry) {
	d.object(n, fp, []field{
		{"metrics", func(n *node, fp fieldPath) { d.metrics(n, fp, &t.Metrics) }},
	})
}
