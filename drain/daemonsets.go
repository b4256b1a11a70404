package drain

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	"k8s.io/utils/clock"
)

// daemonSets answers the question kubectl's filters ask of every DaemonSet pod, "does
// its DaemonSet exist?", from a list of every DaemonSet. kubectl's filter
// (k8s.io/kubectl/pkg/drain, daemonSetFilter) sends one GET per DaemonSet pod: thousands
// for a plan over a fleet, where every node runs a few, and again each time a node's pods
// are looked at. The list is taken again on the first question after it is dsListTTL
// old, so a DaemonSet deleted during a long run is seen as kubectl would see it within
// that time. A name the list does not hold is asked of the server as kubectl would (an
// orphaned pod, or a DaemonSet created since the list); while there is no list (the first
// one in flight, or a failed one: a user who may get DaemonSets but not list them) every
// question goes to the server. A nil *daemonSets asks the server every time.
type daemonSets struct {
	c     kubernetes.Interface
	chunk int64
	clock clock.PassiveClock

	mu      sync.Mutex
	names   map[string]bool // namespace/name, as listed at
	at      time.Time
	listing bool
	denied  bool // the list failed: ask the server from now on
}

// dsListTTL is how long a list of the DaemonSets answers before it is taken again.
const dsListTTL = 30 * time.Second

func newDaemonSets(c kubernetes.Interface, chunk int64, clk clock.PassiveClock) *daemonSets {
	return &daemonSets{c: c, chunk: chunk, clock: clk}
}

// known returns the DaemonSets as last listed, listing them first (outside the lock, with
// the asker's ctx) when there is no list younger than dsListTTL and nobody is listing; nil
// when the server is to be asked instead.
func (d *daemonSets) known(ctx context.Context) map[string]bool {
	d.mu.Lock()
	fresh := d.names != nil && d.clock.Since(d.at) < dsListTTL
	if fresh || d.listing || d.denied {
		names := d.names
		if d.denied {
			names = nil
		}
		d.mu.Unlock()
		return names
	}
	d.listing = true
	d.mu.Unlock()
	names, err := d.list(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.listing = false
	switch {
	case err == nil:
		d.names, d.at = names, d.clock.Now()
	case ctx.Err() == nil:
		d.denied = true // kubectl's GETs from now on
	}
	return d.names
}

func (d *daemonSets) list(ctx context.Context) (map[string]bool, error) {
	names := map[string]bool{}
	opts := metav1.ListOptions{Limit: d.chunk}
	for {
		list, err := d.c.AppsV1().DaemonSets(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list daemonsets: %w", err)
		}
		for i := range list.Items {
			names[list.Items[i].Namespace+"/"+list.Items[i].Name] = true
		}
		if list.Continue == "" {
			return names, nil
		}
		opts.Continue = list.Continue
	}
}

// client wraps c so that a GET of a DaemonSet the list holds is answered without a
// request (kubectl's filter sends its GET with the helper's context; the list uses it).
func (d *daemonSets) client(c kubernetes.Interface) kubernetes.Interface {
	if d == nil {
		return c
	}
	return dsClient{Interface: c, ds: d}
}

type dsClient struct {
	kubernetes.Interface
	ds *daemonSets
}

// AppsV1 serves DaemonSet GETs from the list.
func (c dsClient) AppsV1() appsv1client.AppsV1Interface {
	return dsApps{AppsV1Interface: c.Interface.AppsV1(), ds: c.ds}
}

type dsApps struct {
	appsv1client.AppsV1Interface
	ds *daemonSets
}

func (c dsApps) DaemonSets(ns string) appsv1client.DaemonSetInterface {
	return dsGetter{DaemonSetInterface: c.AppsV1Interface.DaemonSets(ns), ns: ns, ds: c.ds}
}

type dsGetter struct {
	appsv1client.DaemonSetInterface
	ns string
	ds *daemonSets
}

// Get answers from the list when it holds the name (the filter reads nothing but the
// error), and asks the server otherwise.
func (g dsGetter) Get(ctx context.Context, name string, opts metav1.GetOptions) (*appsv1.DaemonSet, error) {
	if g.ds.known(ctx)[g.ns+"/"+name] {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: g.ns, Name: name}}, nil
	}
	return g.DaemonSetInterface.Get(ctx, name, opts)
}
