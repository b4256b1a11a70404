{{/* The controller's name: the objects' names as config/ has them. */}}
{{- define "km.name" -}}kubectl-maintenance-controller{{- end }}

{{/* Labels Helm's conventions add to every object. */}}
{{- define "km.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
km.manifests renders a file of files/ (a copy of config/, made and checked by make generate)
in the release's namespace: every namespaced object, and every ServiceAccount subject of a
binding, moves to it, as `kubectl maintenance install -n` does. Arguments: (list $ path).
*/}}
{{- define "km.manifests" -}}
{{- $root := index . 0 -}}
{{- $keep := index . 2 -}}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" ($root.Files.Get (index . 1)) -1 }}
{{- $o := fromYaml $doc }}
{{- if and $o $o.kind }}
{{- if $o.metadata.namespace }}{{ $_ := set $o.metadata "namespace" $root.Release.Namespace }}{{ end }}
{{- range $s := (default list $o.subjects) }}
{{- if and (eq $s.kind "ServiceAccount") $s.namespace }}{{ $_ := set $s "namespace" $root.Release.Namespace }}{{ end }}
{{- end }}
{{- $_ := set $o.metadata "labels" (merge (default dict $o.metadata.labels) (include "km.labels" $root | fromYaml)) }}
{{- if $keep }}{{ $_ := set $o.metadata "annotations" (merge (default dict $o.metadata.annotations) (dict "helm.sh/resource-policy" "keep")) }}{{ end }}
---
{{ toYaml $o }}
{{- end }}
{{- end }}
{{- end }}
