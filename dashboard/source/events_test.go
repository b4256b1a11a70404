package source

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// A node's Events are read from events.k8s.io and core alike, each once, newest first,
// each timed by what it has (a series, eventTime, lastTimestamp).
func TestEventsFromBothAPIsNewestFirst(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 11, 28, 10, m, 0, 0, time.UTC) }
	cs := fake.NewClientset(
		&eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default", UID: "a"}, Regarding: corev1.ObjectReference{Kind: "Node", Name: "n1"},
			EventTime: metav1.NewMicroTime(at(1)), Reason: "DrainStarted", Type: "Normal", Note: "draining", ReportingController: "kubectl-maintenance"},
		&eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default", UID: "b"}, Regarding: corev1.ObjectReference{Kind: "Node", Name: "n1"},
			EventTime: metav1.NewMicroTime(at(0)), Series: &eventsv1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(at(3))}, Reason: "DrainBlocked", Type: "Warning"},
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", UID: "c"}, InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "n1"},
			LastTimestamp: metav1.NewTime(at(0)), Reason: "Cordoned", Type: "Normal", Source: corev1.EventSource{Component: "kubectl"}},
	)
	rows, err := Events(context.Background(), cs, data.Ref{Kind: "Node", Name: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		reason string
		count  int32
	}{{"DrainBlocked", 4}, {"DrainStarted", 1}, {"Cordoned", 1}}
	if len(rows) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		if rows[i].Reason != w.reason || rows[i].Count != w.count {
			t.Errorf("event %d = %+v, want %s x%d", i, rows[i], w.reason, w.count)
		}
	}
}
