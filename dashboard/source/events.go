package source

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-maintenance/kubectl-maintenance/tui/data"
)

// maxEvents bounds the Events read for one object.
const maxEvents = 200

// Events reads the Events of ref, newest first, from events.k8s.io/v1 (regarding) and
// core/v1 (involvedObject) alike: the two are views of one resource, so an Event found
// in both is listed once (by UID). Events of a cluster-scoped object (a node, a
// Maintenance) live in any namespace ("default" for the kubelet's and ours), so they are
// read across namespaces. A failure of one API is returned only when both fail.
func Events(ctx context.Context, kube kubernetes.Interface, ref data.Ref) ([]data.EventRow, error) {
	ns := ref.Namespace // "" (every namespace) for cluster-scoped objects
	var rows []data.EventRow
	seen := map[string]bool{}
	add := func(uid string, r data.EventRow) {
		if !seen[uid] {
			seen[uid] = true
			rows = append(rows, r)
		}
	}
	newSel := fields.Set{"regarding.kind": ref.Kind, "regarding.name": ref.Name}.String()
	nl, newErr := kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: newSel, Limit: maxEvents})
	if newErr == nil {
		for i := range nl.Items {
			e := &nl.Items[i]
			add(string(e.UID), newRow(e))
		}
	}
	oldSel := fields.Set{"involvedObject.kind": ref.Kind, "involvedObject.name": ref.Name}.String()
	ol, oldErr := kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: oldSel, Limit: maxEvents})
	if oldErr == nil {
		for i := range ol.Items {
			e := &ol.Items[i]
			add(string(e.UID), coreRow(e))
		}
	}
	if newErr != nil && oldErr != nil {
		return nil, fmt.Errorf("list events of %s %s: %w", ref.Kind, ref.Name, oldErr)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Time.After(rows[j].Time) })
	return rows, nil
}

// newRow is an events.k8s.io Event: its time is the series' last, else eventTime, else
// the deprecated timestamps.
func newRow(e *eventsv1.Event) data.EventRow {
	r := data.EventRow{Type: e.Type, Reason: e.Reason, Message: e.Note, From: e.ReportingController, Count: 1}
	switch {
	case e.Series != nil:
		r.Time, r.Count = e.Series.LastObservedTime.Time, e.Series.Count
	case !e.EventTime.IsZero():
		r.Time = e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		r.Time, r.Count = e.DeprecatedLastTimestamp.Time, max(e.DeprecatedCount, 1)
	default:
		r.Time = e.CreationTimestamp.Time
	}
	if r.From == "" {
		r.From = e.DeprecatedSource.Component
	}
	return r
}

// coreRow is a core Event: lastTimestamp, else eventTime (an Event written through
// events.k8s.io has only that), else firstTimestamp or its creation.
func coreRow(e *corev1.Event) data.EventRow {
	r := data.EventRow{Type: e.Type, Reason: e.Reason, Message: e.Message, From: e.Source.Component, Count: max(e.Count, 1)}
	switch {
	case e.Series != nil:
		r.Time, r.Count = e.Series.LastObservedTime.Time, e.Series.Count
	case !e.LastTimestamp.IsZero():
		r.Time = e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		r.Time = e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		r.Time = e.FirstTimestamp.Time
	default:
		r.Time = e.CreationTimestamp.Time
	}
	if r.From == "" {
		r.From = e.ReportingController
	}
	return r
}
