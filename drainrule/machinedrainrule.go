package drainrule

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
)

// Cluster API's MachineDrainRule resource.
const (
	Group    = "cluster.x-k8s.io"
	Resource = "machinedrainrules"
)

// MachineDrainRule is what a drain reads of one of Cluster API's MachineDrainRule
// objects: its name (rules are tried sorted by name), spec.pods (any entry whose pod
// selector and namespace selector both match; none matches every pod) and spec.drain.
// spec.machines is not read: a drain of a node by hand applies every rule to it.
type MachineDrainRule struct {
	Name     string
	Pods     []PodSelector
	Behavior Behavior
	Order    int32
}

// mdrList is the part of a MachineDrainRuleList (v1beta1 and v1beta2 alike) read here.
type mdrList struct {
	Items []struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Spec     struct {
			Drain struct {
				Behavior Behavior `json:"behavior"`
				Order    *int32   `json:"order"`
			} `json:"drain"`
			Pods []struct {
				Selector          *metav1.LabelSelector `json:"selector"`
				NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
			} `json:"pods"`
		} `json:"spec"`
	} `json:"items"`
}

// LoadMachineDrainRules lists the cluster's MachineDrainRules when the API server serves
// them (discovery first: nothing is listed on a cluster without Cluster API's CRD). A
// refused list (RBAC) is no error: warning says so and the drain goes on without them.
func LoadMachineDrainRules(ctx context.Context, d discovery.DiscoveryInterface) (rules []MachineDrainRule, warning string, err error) {
	version, err := servedVersion(d)
	if err != nil || version == "" {
		return nil, "", err
	}
	rc := d.RESTClient()
	if rc == nil {
		return nil, "", nil
	}
	raw, err := rc.Get().AbsPath("/apis", Group, version, Resource).Do(ctx).Raw()
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return nil, fmt.Sprintf("cannot list %s.%s (%v): Cluster API's drain rules are not applied to this drain", Resource, Group, err), nil
	case err != nil:
		return nil, "", fmt.Errorf("list %s.%s: %w", Resource, Group, err)
	}
	return DecodeMachineDrainRules(raw)
}

// servedVersion is the preferred version of Group when it serves Resource, else "".
func servedVersion(d discovery.DiscoveryInterface) (string, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return "", fmt.Errorf("discover API groups: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name != Group {
			continue
		}
		versions := append([]metav1.GroupVersionForDiscovery{g.PreferredVersion}, g.Versions...)
		for _, v := range versions {
			if v.GroupVersion == "" {
				continue
			}
			rl, err := d.ServerResourcesForGroupVersion(v.GroupVersion)
			if err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return "", fmt.Errorf("discover %s: %w", v.GroupVersion, err)
			}
			for _, r := range rl.APIResources {
				if r.Name == Resource {
					return v.Version, nil
				}
			}
		}
	}
	return "", nil
}

// DecodeMachineDrainRules reads a MachineDrainRuleList (JSON). Each rule's selectors are
// checked; a rule with an unknown behavior is an error naming it.
func DecodeMachineDrainRules(raw []byte) (rules []MachineDrainRule, warning string, err error) {
	var l mdrList
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, "", fmt.Errorf("decode %s.%s: %w", Resource, Group, err)
	}
	for _, it := range l.Items {
		m := MachineDrainRule{Name: it.Metadata.Name, Behavior: it.Spec.Drain.Behavior}
		if it.Spec.Drain.Order != nil {
			m.Order = *it.Spec.Drain.Order
		}
		switch m.Behavior {
		case Drain, Skip, WaitCompleted:
		default:
			return nil, "", fmt.Errorf("MachineDrainRule %s: unknown spec.drain.behavior %q", m.Name, m.Behavior)
		}
		for _, p := range it.Spec.Pods {
			sel, err := selector(p.Selector)
			if err != nil {
				return nil, "", fmt.Errorf("MachineDrainRule %s: spec.pods selector: %w", m.Name, err)
			}
			nsSel, err := selector(p.NamespaceSelector)
			if err != nil {
				return nil, "", fmt.Errorf("MachineDrainRule %s: spec.pods namespaceSelector: %w", m.Name, err)
			}
			m.Pods = append(m.Pods, PodSelector{Selector: sel, NamespaceSelector: nsSel})
		}
		rules = append(rules, m)
	}
	return rules, "", nil
}
