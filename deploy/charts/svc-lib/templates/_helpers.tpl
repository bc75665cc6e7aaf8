{{/*
Helpers. Templates below the entry point take a context dict: (dict "root" $ "v" $values), where
$values is the including chart's values merged over "svc-lib.defaults" and validated.
*/}}

{{/* The merged values as YAML (parse with fromYaml). */}}
{{- define "svc-lib.values" -}}
{{- $defaults := include "svc-lib.defaults" . | fromYaml -}}
{{- toYaml (mustMergeOverwrite $defaults (deepCopy .Values)) -}}
{{- end -}}

{{- define "svc-lib.name" -}}
{{- $v := .v -}}
{{- default $v.component.name $v.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's resource name: the release name when it already names the deployable (helm install crm …). */}}
{{- define "svc-lib.fullname" -}}
{{- $v := .v -}}
{{- if $v.fullnameOverride -}}
{{- $v.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "svc-lib.name" . -}}
{{- if contains $name .root.Release.Name -}}
{{- .root.Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .root.Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "svc-lib.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc-lib.name" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "svc-lib.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "svc-lib.selectorLabels" . }}
app.kubernetes.io/version: {{ .v.image.tag | toString | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: {{ .v.component.kind }}
app.kubernetes.io/part-of: svc-integration-platform
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{- define "svc-lib.serviceAccountName" -}}
{{- if .v.serviceAccount.create -}}
{{- default (include "svc-lib.fullname" .) .v.serviceAccount.name -}}
{{- else -}}
{{- default "default" .v.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* <registry>/<repository>:<tag>[@<digest>], repository defaulting to svc-<name>. */}}
{{- define "svc-lib.image" -}}
{{- $img := .v.image -}}
{{- $registry := required "image.registry is required: the registry (and path) holding the svc-<name> images, e.g. registry.example.com/acme" $img.registry | trimSuffix "/" -}}
{{- $tag := required "image.tag is required: the image tag to deploy, e.g. a release version or git sha" $img.tag | toString -}}
{{- $repository := default (printf "svc-%s" .v.component.name) $img.repository -}}
{{- printf "%s/%s:%s" $registry $repository $tag -}}
{{- with $img.digest }}{{ printf "@%s" . }}{{ end -}}
{{- end -}}

{{/* The container command: the image's bundled JavaScript, node <main> (or <migrate>, with "entry"). */}}
{{- define "svc-lib.command" -}}
- node
- {{ .entry | quote }}
{{- end -}}

{{/*
The plain settings as a map: env, plus HOST and the port variables derived from listenHost and
ports, so what the process binds always matches the ports the pod and Service declare.
*/}}
{{- define "svc-lib.configData" -}}
{{- $v := .v -}}
{{- $data := dict -}}
{{- range $k, $val := $v.env -}}
{{- if or (eq $k "HOST") (eq $k $v.ports.httpEnv) (eq $k $v.ports.metricsEnv) (and $v.ports.grpc (eq $k $v.ports.grpcEnv)) -}}
{{- fail (printf "env.%s is derived from listenHost/ports; set those instead" $k) -}}
{{- end -}}
{{- if or (kindIs "invalid" $val) (eq (toString $val) "") -}}
{{- fail (printf "env.%s is required: set it in values (or remove the key with null if it is not wanted)" $k) -}}
{{- end -}}
{{- $_ := set $data $k (toString $val) -}}
{{- end -}}
{{- $_ := set $data "HOST" (toString $v.listenHost) -}}
{{- $_ := set $data $v.ports.httpEnv (toString $v.ports.http) -}}
{{- $_ := set $data $v.ports.metricsEnv (toString $v.ports.metrics) -}}
{{- if $v.ports.grpc -}}
{{- $_ := set $data $v.ports.grpcEnv (toString $v.ports.grpc) -}}
{{- end -}}
{{- toYaml $data -}}
{{- end -}}

{{/* env entries that read the existing Secret, one per secretEnv mapping. */}}
{{- define "svc-lib.secretEnv" -}}
{{- $v := .v -}}
{{- range $name, $key := $v.secretEnv }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $v.existingSecret }}
      key: {{ default $name $key }}
{{- end }}
{{- end -}}

{{/* Checks that span several values; fails the render with a message naming the value. */}}
{{- define "svc-lib.validate" -}}
{{- $v := .v -}}
{{- $_ := include "svc-lib.image" . -}}
{{- $_ := required "component.name is required" $v.component.name -}}
{{- $_ := required "component.main is required: the entry point in workingDir, e.g. main.mjs" $v.component.main -}}
{{- $_ := required "ports.http is required" $v.ports.http -}}
{{- $_ := required "ports.metrics is required" $v.ports.metrics -}}
{{- if not (has $v.component.kind (list "service" "gateway")) -}}
{{- fail (printf "component.kind must be service or gateway, not %q" $v.component.kind) -}}
{{- end -}}
{{- if $v.secretEnv -}}
{{- $_ := required "existingSecret is required: the name of a Secret (in the release namespace) holding the keys listed in secretEnv; these charts never create one" $v.existingSecret -}}
{{- end -}}
{{- range $name, $_ := $v.secretEnv -}}
{{- if hasKey $v.env $name -}}
{{- fail (printf "%s is in both env and secretEnv; keep one" $name) -}}
{{- end -}}
{{- end -}}
{{- if and $v.migration.enabled (not $v.component.migrate) -}}
{{- fail "migration.enabled is true but component.migrate (the migration entry point) is empty" -}}
{{- end -}}
{{- if and $v.ingress.enabled (not $v.ingress.hosts) -}}
{{- fail "ingress.enabled needs at least one entry in ingress.hosts" -}}
{{- end -}}
{{- $_ := include "svc-lib.configData" . -}}
{{- end -}}
