package cluster

import "testing"

func TestSumMetric(t *testing.T) {
	text := []byte(`# HELP apiserver_request_total [STABLE] Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",group="policy",resource="pods",subresource="eviction",verb="POST",version="v1"} 3
apiserver_request_total{code="429",component="apiserver",group="policy",resource="pods",subresource="eviction",verb="POST",version="v1"} 4
apiserver_request_total{code="200",component="apiserver",group="",resource="pods",subresource="",verb="LIST",version="v1"} 7
apiserver_request_total_other{resource="pods",subresource="eviction",verb="POST"} 100
apiserver_request_duration_seconds_bucket{le="0.1",resource="pods",subresource="eviction",verb="POST"} 50
apiserver_storage_objects{resource="a,b=\"c\""} 2.5
process_start_time_seconds 1.7e+09
`)
	tests := []struct {
		name   string
		metric string
		match  map[string]string
		want   float64
	}{
		{"every answer to an eviction, whatever its code", "apiserver_request_total",
			map[string]string{"resource": "pods", "subresource": "eviction", "verb": "POST"}, 7},
		{"only the accepted ones", "apiserver_request_total",
			map[string]string{"subresource": "eviction", "code": "201"}, 3},
		{"a label value holding a comma and quotes", "apiserver_storage_objects", nil, 2.5},
		{"a metric without labels", "process_start_time_seconds", nil, 1.7e9},
		{"no sample matches", "apiserver_request_total", map[string]string{"resource": "nodes"}, 0},
		{"a longer metric name with the same prefix is not counted", "apiserver_request", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sumMetric(text, tc.metric, tc.match)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("sumMetric(%s, %v) = %v, want %v", tc.metric, tc.match, got, tc.want)
			}
		})
	}
}
