{{/* Shown after install/upgrade: `{{ include "svc-lib.notes" . }}` in a deployable's NOTES.txt. */}}
{{- define "svc-lib.notes" -}}
{{- $v := include "svc-lib.values" . | fromYaml -}}
{{- $ctx := dict "root" . "v" $v -}}
{{- $fullname := include "svc-lib.fullname" $ctx -}}
{{ $v.component.name }} {{ $v.image.tag }} is released as {{ .Release.Name }} in namespace {{ .Release.Namespace }}.

  image:   {{ include "svc-lib.image" $ctx }}
  http:    {{ $fullname }}:{{ $v.ports.http }}  (GET /healthz, GET /readyz)
  metrics: {{ $fullname }}:{{ $v.ports.metrics }}  (GET {{ $v.metrics.path }} only)
{{- if $v.ports.grpc }}
  grpc:    {{ $fullname }}:{{ $v.ports.grpc }}
{{- end }}
  secret:  {{ $v.existingSecret }} (keys: {{ values $v.secretEnv | sortAlpha | join ", " }})
{{- if and $v.migration.enabled $v.component.migrate }}
  migrations ran in Job {{ $fullname | trunc 55 | trimSuffix "-" }}-migrate before the pods rolled.
{{- end }}

  kubectl -n {{ .Release.Namespace }} rollout status deployment/{{ $fullname }}
{{- end -}}
