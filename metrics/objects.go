package metrics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-maintenance/kubectl-maintenance/maintenance/api/v1alpha1"
)

// listTimeout bounds one read of the cache at scrape time.
const listTimeout = 5 * time.Second

// Objects is a collector of the Maintenances a reader holds (the controller's cache: no
// API call at scrape time): how many are in each phase, and the nodes their status lists
// by phase and state. It is as fresh as the objects' status (written at most every few
// seconds by the controller).
type Objects struct {
	// Reader lists Maintenances (the manager's cache).
	Reader client.Reader

	phaseDesc, nodesDesc *prometheus.Desc
}

// NewObjects returns the collector of the Maintenances reader holds.
func NewObjects(reader client.Reader) *Objects {
	return &Objects{Reader: reader,
		phaseDesc: prometheus.NewDesc(MaintenancesByPhase, help(MaintenancesByPhase), []string{"phase"}, nil),
		nodesDesc: prometheus.NewDesc(MaintenanceNodes, help(MaintenanceNodes), []string{"phase", "state"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (o *Objects) Describe(ch chan<- *prometheus.Desc) {
	ch <- o.phaseDesc
	ch <- o.nodesDesc
}

// Collect implements prometheus.Collector. A list that fails reports nothing (the scrape
// shows the families absent rather than wrong).
func (o *Objects) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	var list v1alpha1.MaintenanceList
	if err := o.Reader.List(ctx, &list); err != nil {
		return
	}
	byPhase, nodes := Count(list.Items)
	for _, p := range append(phases, otherValue) {
		ch <- prometheus.MustNewConstMetric(o.phaseDesc, prometheus.GaugeValue, float64(byPhase[p]), p)
	}
	for k, n := range nodes {
		ch <- prometheus.MustNewConstMetric(o.nodesDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}

// Count counts items by phase, and their status's nodes by the object's phase and the
// node's state, every value bounded (unknown values become "Other").
func Count(items []v1alpha1.Maintenance) (byPhase map[string]int, nodes map[[2]string]int) {
	byPhase, nodes = map[string]int{}, map[[2]string]int{}
	for i := range items {
		m := &items[i]
		phase := string(m.Status.Phase)
		if phase == "" {
			phase = string(v1alpha1.PhasePending)
		}
		phase = bounded(phase, phases)
		byPhase[phase]++
		for _, n := range m.Status.Nodes {
			nodes[[2]string{phase, bounded(n.State, nodeStates)}]++
		}
	}
	return byPhase, nodes
}

// Register adds rec's families and the Objects of reader to reg. A family already there
// (a second controller in one process, a test) is replaced, so the latest is served.
func Register(reg prometheus.Registerer, rec *Recorder, reader client.Reader) error {
	cs := []prometheus.Collector{rec.evictions, rec.statusWrites, rec.holds, rec.nodeDuration, rec.runDuration, rec}
	if reader != nil {
		cs = append(cs, NewObjects(reader))
	}
	for _, c := range cs {
		err := reg.Register(c)
		var dup prometheus.AlreadyRegisteredError
		if errors.As(err, &dup) {
			reg.Unregister(c)
			err = reg.Register(c)
		}
		if err != nil {
			return fmt.Errorf("register the metrics: %w", err)
		}
	}
	return nil
}
