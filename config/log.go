package config

// Log formats (log.format).
const (
	LogText = "text"
	LogJSON = "json"
)

// Log configures the server's own log on stderr (log).
type Log struct {
	// Format is LogText (logfmt-like lines, the default; "" means it) or
	// LogJSON (one JSON object per line). The environment variable
	// CODEMODE_LOG_FORMAT wins over it.
	Format string
	// Level is "debug", "info", "warn" or "error"; "" means info. The
	// environment variable CODEMODE_LOG_LEVEL wins over it.
	Level string
}

// log decodes the log section.
func (d *decoder) log(n *node, fp fieldPath, l *Log) {
	d.object(n, fp, []field{
		{"format", func(n *node, fp fieldPath) {
			if v, ok := d.oneOf(n, fp, LogText, LogJSON); ok {
				l.Format = v
			}
		}},
		{"level", func(n *node, fp fieldPath) {
			if v, ok := d.oneOf(n, fp, "debug", "info", "warn", "error"); ok {
				l.Level = v
			}
		}},
	})
}
