{{- define "svc-lib.service" -}}
{{- $v := .v -}}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "svc-lib.fullname" . }}
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
  {{- with $v.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $v.service.type }}
  selector:
    {{- include "svc-lib.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ $v.ports.http }}
      targetPort: http
      protocol: TCP
      appProtocol: http
    {{- if $v.ports.grpc }}
    - name: grpc
      port: {{ $v.ports.grpc }}
      targetPort: grpc
      protocol: TCP
      appProtocol: grpc
    {{- end }}
    - name: metrics
      port: {{ $v.ports.metrics }}
      targetPort: metrics
      protocol: TCP
      appProtocol: http
{{- end -}}
