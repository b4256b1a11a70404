package drain

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-maintenance/kubectl-maintenance/event"
)

// core is what every part of a run shares (doc.go): the run's one lock with the effects
// queued under it, the goroutines the run starts, its events and clock, and its
// configuration. The run holds it and hands it to each part by its constructor; a part
// decides under the lock, queues what it must do outside it with later, and emits.
type core struct {
	mu      sync.Mutex
	effects []func()
	// wg counts every goroutine the run starts besides the workers.
	wg sync.WaitGroup
	// cfg is the engine's configuration (its settings and wiring); read only.
	cfg *Config
	// post delivers an event through the engine's outbox; it never blocks.
	post func(event.Event)
}

// newCore is the core of a run of e.
func newCore(cfg *Config, post func(event.Event)) core {
	return core{cfg: cfg, post: post}
}

func (c *core) lock() { c.mu.Lock() }

// unlock releases the lock, then runs the effects queued under it, in order.
func (c *core) unlock() {
	fx := c.effects
	c.effects = nil
	c.mu.Unlock()
	for _, f := range fx {
		f()
	}
}

// later queues f to run once the lock is released. Call it with the lock held.
func (c *core) later(f func()) { c.effects = append(c.effects, f) }

// goroutine starts f, counted in wg.
func (c *core) goroutine(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// emit posts ev, stamped with the clock's time if it has none; it never blocks, so it
// may be called under the lock.
func (c *core) emit(ev event.Event) { c.post(ev) }

// now is the run's clock's time.
func (c *core) now() time.Time { return c.cfg.Clock.Now() }

// every calls fn each period of the run's clock until ctx ends (fn runs on the caller's
// goroutine, never under the lock).
func (c *core) every(ctx context.Context, period time.Duration, fn func()) {
	t := c.cfg.Clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		fn()
	}
}

// informerObject is an informer handler's object, the last state known of one deleted
// while the watch was down included.
func informerObject(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
