{{- define "svc-lib.serviceAccount" -}}
{{- if .v.serviceAccount.create }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "svc-lib.serviceAccountName" . }}
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
  {{- with .v.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: {{ .v.serviceAccount.automountToken }}
{{- end }}
{{- end -}}
