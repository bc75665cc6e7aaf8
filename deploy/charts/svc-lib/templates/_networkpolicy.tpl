{{/*
NetworkPolicy (decision 0105): only the gateway is reachable from outside. A service's ports answer the pods of the
platform (the gateway and the other services, label app.kubernetes.io/part-of) and whatever networkPolicy.extraIngress
adds (a Prometheus namespace for /metrics, say). Egress is not restricted: Postgres, Redis and NATS are external, at
addresses these charts do not know.
*/}}
{{- define "svc-lib.networkPolicy" -}}
{{- $v := .v -}}
{{- if $v.networkPolicy.enabled }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "svc-lib.fullname" . }}
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "svc-lib.selectorLabels" . | nindent 6 }}
  policyTypes:
    - Ingress
  ingress:
    {{- if eq $v.component.kind "gateway" }}
    - ports:
        - port: http
          protocol: TCP
    {{- else }}
    - from:
        - podSelector:
            matchLabels:
              app.kubernetes.io/part-of: svc-integration-platform
      ports:
        - port: http
          protocol: TCP
        {{- if $v.ports.grpc }}
        - port: grpc
          protocol: TCP
        {{- end }}
    {{- end }}
    {{- with $v.networkPolicy.extraIngress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}
{{- end -}}
