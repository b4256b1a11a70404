// Package kubefake is client-go's fake clientset made to hand out what the API server
// hands out: each watch event carries its own copy of the object. The fake's tracker
// sends the object it stores to every watcher, so an informer transform that trims an
// object in place (as drain's trimManagedFields does, rightly, with objects decoded from
// the wire) would trim the stored object too, and a later read would miss its
// managedFields (which decide whose cordon a node carries). For unit tests only.
package kubefake

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// New is fake.NewClientset(objs...) whose watches deliver copies.
func New(objs ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objs...)
	tracker := cs.Tracker()
	cs.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := a.(k8stesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := tracker.Watch(a.GetResource(), a.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		return true, watch.Filter(w, copyObject), nil
	})
	return cs
}

// copyObject gives the watcher its own copy of the event's object.
func copyObject(e watch.Event) (watch.Event, bool) {
	if e.Object != nil {
		e.Object = e.Object.DeepCopyObject()
	}
	return e, true
}
