package drain

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
)

// daemonSets answers the question kubectl's filters ask of every DaemonSet pod, "does
// its DaemonSet exist?", from one list of every DaemonSet taken on first use. kubectl's
// filter (k8s.io/kubectl/pkg/drain, daemonSetFilter) sends one GET per DaemonSet pod:
// thousands for a plan over a fleet, where every node runs a few, and again each time a
// node's pods are looked at. A name the list does not hold is asked of the server as
// kubectl would (an orphaned pod, or a DaemonSet created since the list); a list that
// fails (a user who may get DaemonSets but not list them) leaves every question to the
// server. A nil *daemonSets asks the server every time.
type daemonSets struct {
	c     kubernetes.Interface
	chunk int64
	once  sync.Once
	names map[string]bool // namespace/name
	err   error
}

func newDaemonSets(c kubernetes.Interface, chunk int64) *daemonSets {
	return &daemonSets{c: c, chunk: chunk}
}

// known returns the DaemonSets listed on first use (ctx is the first caller's).
func (d *daemonSets) known(ctx context.Context) (map[string]bool, error) {
	d.once.Do(func() { d.names, d.err = d.list(ctx) })
	return d.names, d.err
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
// request. kubectl's filter sends its GET with context.TODO(); the list uses ctx.
func (d *daemonSets) client(ctx context.Context, c kubernetes.Interface) kubernetes.Interface {
	if d == nil {
		return c
	}
	return dsClient{Interface: c, ctx: ctx, ds: d}
}

type dsClient struct {
	kubernetes.Interface
	ctx context.Context
	ds  *daemonSets
}

// AppsV1 serves DaemonSet GETs from the list.
func (c dsClient) AppsV1() appsv1client.AppsV1Interface {
	return dsApps{AppsV1Interface: c.Interface.AppsV1(), ctx: c.ctx, ds: c.ds}
}

type dsApps struct {
	appsv1client.AppsV1Interface
	ctx context.Context
	ds  *daemonSets
}

func (c dsApps) DaemonSets(ns string) appsv1client.DaemonSetInterface {
	return dsGetter{DaemonSetInterface: c.AppsV1Interface.DaemonSets(ns), ctx: c.ctx, ns: ns, ds: c.ds}
}

type dsGetter struct {
	appsv1client.DaemonSetInterface
	ctx context.Context
	ns  string
	ds  *daemonSets
}

// Get answers from the list when it holds the name (the filter reads nothing but the
// error), and asks the server otherwise.
func (g dsGetter) Get(ctx context.Context, name string, opts metav1.GetOptions) (*appsv1.DaemonSet, error) {
	if names, err := g.ds.known(g.ctx); err == nil && names[g.ns+"/"+name] {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: g.ns, Name: name}}, nil
	}
	return g.DaemonSetInterface.Get(ctx, name, opts)
}
