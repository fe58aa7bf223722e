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
	Format string `cfg:"format,oneof=text|json"`
	// Level is "debug", "info", "warn" or "error"; "" means info. The
	// environment variable CODEMODE_LOG_LEVEL wins over it.
	Level string `cfg:"level,oneof=debug|info|warn|error"`
}
