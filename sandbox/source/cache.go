package source

import (
	"container/list"
	"crypto/sha256"
	"sync"
)

// Cache keeps the most recently used normalised programs (a replay
// runs the same code again; a goja.Program is safe to share between
// runtimes), within a count and a weight in bytes (see entryWeight).
// Syntax errors are cached too. It is safe for concurrent use.
type Cache struct {
	max      int   // fixed at creation; 0 disables the cache
	maxBytes int64 // fixed at creation: the most the entries weigh

	mu    sync.Mutex
	bytes int64      // what the entries weigh
	order *list.List // of *cacheEntry, most recent first
	byKey map[cacheKey]*list.Element
}

type cacheKey struct {
	sum  [sha256.Size]byte
	file string
}

type cacheEntry struct {
	key    cacheKey
	norm   *Normalized
	err    error
	weight int64
}

// NewCache returns a cache of at most max programs weighing at most
// maxBytes (max 0: no cache).
func NewCache(max int, maxBytes int64) *Cache {
	return &Cache{max: max, maxBytes: maxBytes, order: list.New(), byKey: map[cacheKey]*list.Element{}}
}

// entryWeight is what a program of code, normalised to n (nil for a
// syntax error), weighs in the cache, its compiled form included:
// measured at 21 to 39 times the code's size for programs near a MiB (39
// for a long array literal), and 5 KiB for the smallest; plus twice the
// normalised source, which the program keeps twice (the position map's
// and goja's) and which is much larger than the code for nested code:
// esbuild indents each level, so code nested n levels prints as up to n
// times its size (n is at most MaxNesting).
func entryWeight(code string, n *Normalized) int64 {
	w := 8<<10 + 40*int64(len(code))
	if n != nil {
		w += 2 * int64(len(n.pos.src))
	}
	return w
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
	if w := entryWeight(code, norm); c.byKey[key] == nil && w <= c.maxBytes {
		c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, norm: norm, err: err, weight: w})
		c.bytes += w
		for c.order.Len() > c.max || c.bytes > c.maxBytes {
			last := c.order.Remove(c.order.Back()).(*cacheEntry)
			delete(c.byKey, last.key)
			c.bytes -= last.weight
		}
	}
	return norm, err
}
