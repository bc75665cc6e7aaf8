{{/*
Runs the service's migrations before its pods roll: a Helm hook on pre-install and pre-upgrade.
Hooks run before the release's own resources exist, so the Job carries the settings inline (the same
values the ConfigMap gets) instead of reading the ConfigMap, and runs under migration.serviceAccountName.
Its delete policy is before-hook-creation only: the Job, failed or succeeded, stays with its pod's logs for
`kubectl logs` until the next install/upgrade replaces it (decision 0192).
*/}}
{{- define "svc-lib.migrationJob" -}}
{{- $v := .v -}}
{{- if and $v.migration.enabled $v.component.migrate }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ include "svc-lib.fullname" . | trunc 55 | trimSuffix "-" }}-migrate
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "0"
    helm.sh/hook-delete-policy: before-hook-creation
    {{- with $v.migration.annotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  backoffLimit: {{ $v.migration.backoffLimit }}
  activeDeadlineSeconds: {{ $v.migration.activeDeadlineSeconds }}
  template:
    metadata:
      labels:
        {{- /* not the Deployment's selector labels: the Service and the PDB must not pick this pod */}}
        app.kubernetes.io/name: {{ include "svc-lib.name" . | trunc 55 | trimSuffix "-" }}-migrate
        app.kubernetes.io/instance: {{ .root.Release.Name }}
        app.kubernetes.io/component: migration
        app.kubernetes.io/part-of: svc-integration-platform
    spec:
      restartPolicy: Never
      {{- with $v.migration.serviceAccountName }}
      serviceAccountName: {{ . }}
      {{- end }}
      automountServiceAccountToken: false
      {{- include "svc-lib.podCommon" . | trim | nindent 6 }}
      containers:
        - name: migrate
          {{- include "svc-lib.containerCommon" . | nindent 10 }}
          command:
            {{- include "svc-lib.command" (dict "entry" $v.component.migrate) | nindent 12 }}
          env:
            {{- range $name, $value := (include "svc-lib.configData" . | fromYaml) }}
            - name: {{ $name }}
              value: {{ $value | quote }}
            {{- end }}
            {{- with (include "svc-lib.secretEnv" . | trim) }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          resources:
            {{- toYaml (default $v.resources $v.migration.resources) | nindent 12 }}
{{- end }}
{{- end -}}
