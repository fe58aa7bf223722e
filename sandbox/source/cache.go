package source

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// Cache keeps the most recently used normalised programs (a replay
// runs the same code again; a goja.Program is safe to share between
// runtimes). Syntax errors are cached too. It is safe for concurrent use.
type Cache struct {
	max int // fixed at creation; 0 disables the cache

	mu    sync.Mutex
	order *list.List // of *cacheEntry, most recent first
	byKey map[cacheKey]*list.Element
}

type cacheKey struct {
	sum  [sha256.Size]byte
	file string
}

type cacheEntry struct {
	key  cacheKey
	norm *Normalized
	err  error
}

// NewCache returns a cache of max programs (0: no cache).
func NewCache(max int) *Cache {
	return &Cache{max: max, order: list.New(), byKey: map[cacheKey]*list.Element{}}
}

// Normalize returns the normalised code (see Normalize), from the cache
// when it is there.
func (c *Cache) Normalize(code, file string) (*Normalized, error) {
	if c.max <= 0 {
		return Normalize(code, file)
	}
	key := cacheKey{sum: sha256.Sum256([]byte(code)), file: file}
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		return e.norm, e.err
	}
	c.mu.Unlock()

	norm, err := Normalize(code, file)
	if err != nil {
		if _, ok := err.(*SyntaxError); !ok {
			return nil, err // internal failures are not cached
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; !ok {
		c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, norm: norm, err: err})
		for c.order.Len() > c.max {
			last := c.order.Back()
			c.order.Remove(last)
			delete(c.byKey, last.Value.(*cacheEntry).key)
		}
	}
	return norm, err
}
