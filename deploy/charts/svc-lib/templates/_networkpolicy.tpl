{{/*
NetworkPolicy of the deployable's pods (decision 0106). Only the gateway is reachable from outside the platform:
its http port from anyone (or from networkPolicy.ingressFrom). A service accepts its http and gRPC ports only
from the platform's own pods in the namespace (the gateway, the other services). Every pod's metrics port is open
to metricsFrom only (the monitoring namespace by default, decision 0190).
Kubelet probes are not pod traffic and are not affected. Egress stays open unless networkPolicy.egress.enabled.
*/}}
{{- define "svc-lib.networkPolicy" -}}
{{- $v := .v -}}
{{- $np := $v.networkPolicy -}}
{{- if $np.enabled }}
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
    {{- if $np.egress.enabled }}
    - Egress
    {{- end }}
  ingress:
    {{- if eq $v.component.kind "gateway" }}
    - ports:
        - port: http
          protocol: TCP
      {{- with $np.ingressFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
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
    {{- with $np.metricsFrom }}
    - from:
        {{- toYaml . | nindent 8 }}
      ports:
        - port: metrics
          protocol: TCP
    {{- end }}
  {{- if $np.egress.enabled }}
  egress:
    # DNS, wherever the cluster runs it
    - ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
    # the platform's own pods: the gateway's peers, crm's gRPC
    - to:
        - podSelector:
            matchLabels:
              app.kubernetes.io/part-of: svc-integration-platform
    {{- with $np.egress.to }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
{{- end }}
{{- end -}}
