{{/* A Prometheus Operator ServiceMonitor over the Service's http port, when serviceMonitor.enabled. */}}
{{- define "svc-lib.serviceMonitor" -}}
{{- $v := .v -}}
{{- if $v.serviceMonitor.enabled }}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "svc-lib.fullname" . }}
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
    {{- with $v.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "svc-lib.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: http
      path: {{ $v.metrics.path }}
      interval: {{ $v.serviceMonitor.interval }}
      scrapeTimeout: {{ $v.serviceMonitor.scrapeTimeout }}
{{- end }}
{{- end -}}
