package mcp

import (
	"context"
	"fmt"
)

// Down reports why the server is unreachable while the connector brings
// it back in the background (see Open), or nil: what Tools returns then.
func (c *Connector) Down() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.down
}

// Dial opens cfg's connector and returns it once its first start is up;
// else it closes it and fails with why, naming the connector.
func Dial(ctx context.Context, cfg Config) (*Connector, error) {
	c, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.Down(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mcp connector %q: %w", cfg.Name, err)
	}
	return c, nil
}
