{{/*
An optional ServiceMonitor (Prometheus Operator) scraping metrics.path on the Service's metrics port; off by default
(the CRD must exist in the cluster). The prometheus.io/* pod annotations serve annotation-based scrapes instead.
*/}}
{{- define "svc-lib.serviceMonitor" -}}
{{- $v := .v -}}
{{- $sm := $v.metrics.serviceMonitor -}}
{{- if $sm.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "svc-lib.fullname" . }}
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
    {{- with $sm.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "svc-lib.selectorLabels" . | nindent 6 }}
  namespaceSelector:
    matchNames:
      - {{ .root.Release.Namespace }}
  endpoints:
    - port: metrics
      path: {{ $v.metrics.path }}
      interval: {{ $sm.interval }}
      scrapeTimeout: {{ $sm.scrapeTimeout }}
      honorLabels: {{ $sm.honorLabels }}
{{- end }}
{{- end -}}
