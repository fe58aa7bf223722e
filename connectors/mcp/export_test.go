package mcp

// Down reports why the server is unreachable while the connector brings
// it back in the background (see Open), or nil: what Tools returns then.
func (c *Connector) Down() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.down
}
