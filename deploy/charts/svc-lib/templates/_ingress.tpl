{{/* Optional; meant for the gateway, the only public entry. */}}
{{- define "svc-lib.ingress" -}}
{{- $v := .v -}}
{{- if $v.ingress.enabled }}
{{- $fullname := include "svc-lib.fullname" . }}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
  {{- with $v.ingress.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- with $v.ingress.className }}
  ingressClassName: {{ . }}
  {{- end }}
  {{- with $v.ingress.tls }}
  tls:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  rules:
    {{- range $v.ingress.hosts }}
    - host: {{ required "ingress.hosts[].host is required" .host | quote }}
      http:
        paths:
          {{- range (default (list (dict "path" "/" "pathType" "Prefix")) .paths) }}
          - path: {{ .path }}
            pathType: {{ default "Prefix" .pathType }}
            backend:
              service:
                name: {{ $fullname }}
                port:
                  name: http
          {{- end }}
    {{- end }}
{{- end }}
{{- end -}}
