{{- define "svc-lib.pdb" -}}
{{- $v := .v -}}
{{- if $v.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "svc-lib.fullname" . }}
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
spec:
  {{- if not (kindIs "invalid" $v.pdb.minAvailable) }}
  minAvailable: {{ $v.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $v.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "svc-lib.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end -}}
