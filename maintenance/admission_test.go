package maintenance

import (
	"context"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// returned reports whether the channel was closed within a moment of real time.
func returned(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(200 * time.Millisecond):
		return false
	}
}

// cordonedIn runs m.cordoned in a goroutine; the channel is closed once it returns.
func cordonedIn(ctx context.Context, m *member) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		m.cordoned(ctx)
	}()
	return ch
}

// The runs that start within the admission window of one another wait, once cordoned,
// for the window to close and for every other run of the batch to cordon or end.
func TestAdmissionBatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, a *admission, clk *testingclock.FakeClock)
	}{
		{name: "a lone run waits out the window, no more", run: func(t *testing.T, a *admission, clk *testingclock.FakeClock) {
			done := cordonedIn(context.Background(), a.join())
			if returned(done) {
				t.Fatal("returned before the window closed")
			}
			clk.Step(time.Second)
			if !returned(done) {
				t.Fatal("still waiting once the window closed")
			}
		}},
		{name: "a run waits for the other runs of its batch to cordon", run: func(t *testing.T, a *admission, clk *testingclock.FakeClock) {
			first := a.join()
			clk.Step(500 * time.Millisecond)
			second := a.join()
			done := cordonedIn(context.Background(), first)
			clk.Step(2 * time.Second) // the window closed
			if returned(done) {
				t.Fatal("returned while the second run had not cordoned")
			}
			other := cordonedIn(context.Background(), second)
			if !returned(done) || !returned(other) {
				t.Fatal("still waiting once both cordoned")
			}
		}},
		{name: "a run that ended holds no one", run: func(t *testing.T, a *admission, clk *testingclock.FakeClock) {
			first, second := a.join(), a.join()
			second.done()
			done := cordonedIn(context.Background(), first)
			clk.Step(time.Second)
			if !returned(done) {
				t.Fatal("waited for a run that ended")
			}
		}},
		{name: "a run that starts after the window opens a batch of its own", run: func(t *testing.T, a *admission, clk *testingclock.FakeClock) {
			_ = a.join() // never cordons
			clk.Step(2 * time.Second)
			done := cordonedIn(context.Background(), a.join())
			clk.Step(time.Second)
			if !returned(done) {
				t.Fatal("waited for a run of an earlier batch")
			}
		}},
		{name: "a run stuck before its cordon holds the batch at most admissionWait", run: func(t *testing.T, a *admission, clk *testingclock.FakeClock) {
			first := a.join()
			_ = a.join() // never cordons
			done := cordonedIn(context.Background(), first)
			clk.Step(time.Second)
			if returned(done) {
				t.Fatal("returned while the other run had not cordoned")
			}
			clk.Step(admissionWait)
			if !returned(done) {
				t.Fatal("still waiting past admissionWait")
			}
		}},
		{name: "an ended context ends the wait", run: func(t *testing.T, a *admission, _ *testingclock.FakeClock) {
			ctx, cancel := context.WithCancel(context.Background())
			done := cordonedIn(ctx, a.join())
			cancel()
			if !returned(done) {
				t.Fatal("still waiting after the context ended")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1_000_000, 0))
			tc.run(t, &admission{clock: clk, window: time.Second}, clk)
		})
	}
}
