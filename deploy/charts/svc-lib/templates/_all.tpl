{{/*
The entry point: a deployable's chart has one template, `{{ include "svc-lib.all" . }}`, and sets
values. Renders every resource of the deployable from the merged, validated values.
*/}}
{{- define "svc-lib.all" -}}
{{- $v := include "svc-lib.values" . | fromYaml -}}
{{- if hasKey $v "Error" -}}
{{- fail (printf "svc-lib: values do not parse: %s" $v.Error) -}}
{{- end -}}
{{- $ctx := dict "root" . "v" $v -}}
{{- include "svc-lib.validate" $ctx -}}
{{- include "svc-lib.serviceAccount" $ctx }}
{{ include "svc-lib.configMap" $ctx }}
{{ include "svc-lib.service" $ctx }}
{{ include "svc-lib.deployment" $ctx }}
{{ include "svc-lib.pdb" $ctx }}
{{ include "svc-lib.hpa" $ctx }}
{{ include "svc-lib.ingress" $ctx }}
{{ include "svc-lib.migrationJob" $ctx }}
{{ include "svc-lib.networkPolicy" $ctx }}
{{ include "svc-lib.serviceMonitor" $ctx }}
{{- end -}}
