package authn

import (
	"math/rand/v2"
	"sync"
)

// credKey is the HMAC-SHA256 of a Basic credential under the
// Authenticator's random key. Keying the cache by a keyed hash means the
// cache never holds a password, and its keys are useless to anyone who
// reads memory without the key.
type credKey [32]byte

// cacheEntry is one verified credential: the user it belongs to and the
// stored password hash it was verified against. The entry vouches for the
// credential only while that stored hash is unchanged.
type cacheEntry struct {
	key  credKey
	user string
	hash []byte // never written after the entry is made, so readers may keep it
}

// credCache is a bounded set of verified credentials. When full, a new
// entry replaces a random one: unlike LRU, a hit changes nothing, so hits
// only take the read lock, and an attacker cannot choose what is evicted
// any better than by flooding with valid credentials, which they would
// need to have.
type credCache struct {
	mu   sync.RWMutex
	max  int
	idx  map[credKey]int // position in ents
	ents []cacheEntry
}

func newCredCache(max int) *credCache {
	return &credCache{max: max, idx: make(map[credKey]int)}
}

// get returns the entry for k.
func (c *credCache) get(k credKey) (user string, hash []byte, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.idx[k]
	if !ok {
		return "", nil, false
	}
	e := &c.ents[i]
	return e.user, e.hash, true
}

// put records that k verified user against the stored hash.
func (c *credCache) put(k credKey, user, hash string) {
	e := cacheEntry{key: k, user: user, hash: []byte(hash)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.idx[k]; ok {
		c.ents[i] = e
		return
	}
	if len(c.ents) < c.max {
		c.idx[k] = len(c.ents)
		c.ents = append(c.ents, e)
		return
	}
	i := rand.IntN(len(c.ents))
	delete(c.idx, c.ents[i].key)
	c.ents[i] = e
	c.idx[k] = i
}

// forget drops every entry of user. It scans the whole cache, which is fine
// for an operation that runs on password changes and the like.
func (c *credCache) forget(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < len(c.ents); {
		if c.ents[i].user != user {
			i++
			continue
		}
		delete(c.idx, c.ents[i].key)
		last := len(c.ents) - 1
		if i != last {
			c.ents[i] = c.ents[last]
			c.idx[c.ents[i].key] = i
		}
		c.ents[last] = cacheEntry{} // let the removed strings be collected
		c.ents = c.ents[:last]
	}
}

// len returns the number of entries.
func (c *credCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.ents)
}
