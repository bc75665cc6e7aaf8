{{/* The plain settings; the Deployment reads them with envFrom and rolls when they change. */}}
{{- define "svc-lib.configMap" -}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "svc-lib.fullname" . }}-config
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
data:
  {{- include "svc-lib.configData" . | nindent 2 }}
{{- end -}}
