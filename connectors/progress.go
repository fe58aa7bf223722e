package connectors

import "context"

// Progress receives what a connector learns of a call's progress while it
// runs (an MCP server's notifications/progress, say): a short message.
// It must be safe for concurrent use and must not block.
type Progress func(message string)

type progressKey struct{}

// WithProgress returns ctx carrying p: a connector that can report progress
// does so for calls made with it.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom returns the Progress ctx carries, or nil.
func ProgressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}
