package noderecord

import "testing"

func TestRunMaintenance(t *testing.T) {
	tests := []struct {
		command string
		name    string
		ok      bool
	}{
		{command: "maintenance/m1", name: "m1", ok: true},
		{command: "maintenance/", name: "", ok: false},
		{command: "drain n1", name: "", ok: false},
		{command: "kubectl maintenance drain n1 --timeout 5m", name: "", ok: false},
		{command: "", name: "", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			name, ok := Run{Command: tt.command}.Maintenance()
			if name != tt.name || ok != tt.ok {
				t.Errorf("Run{Command: %q}.Maintenance() = %q, %v; want %q, %v", tt.command, name, ok, tt.name, tt.ok)
			}
		})
	}
}
