{{- define "svc-lib.probe" -}}
httpGet:
  path: {{ .probe.path }}
  port: http
periodSeconds: {{ .probe.periodSeconds }}
timeoutSeconds: {{ .probe.timeoutSeconds }}
failureThreshold: {{ .probe.failureThreshold }}
{{- end -}}

{{- define "svc-lib.deployment" -}}
{{- $v := .v -}}
{{- $fullname := include "svc-lib.fullname" . -}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "svc-lib.labels" . | nindent 4 }}
spec:
  {{- if not $v.autoscaling.enabled }}
  replicas: {{ $v.replicaCount }}
  {{- end }}
  revisionHistoryLimit: {{ $v.revisionHistoryLimit }}
  strategy:
    {{- toYaml $v.strategy | nindent 4 }}
  selector:
    matchLabels:
      {{- include "svc-lib.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "svc-lib.labels" . | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include "svc-lib.configData" . | sha256sum }}
        {{- if $v.metrics.scrapeAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $v.ports.metrics | toString | quote }}
        prometheus.io/path: {{ $v.metrics.path | quote }}
        {{- end }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "svc-lib.serviceAccountName" . }}
      automountServiceAccountToken: {{ $v.serviceAccount.automountToken }}
      terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
      {{- include "svc-lib.podCommon" . | trim | nindent 6 }}
      {{- if $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- tpl (toYaml $v.topologySpreadConstraints) $.root | nindent 8 }}
      {{- else if $v.spreadAcrossNodes }}
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "svc-lib.selectorLabels" . | nindent 14 }}
      {{- end }}
      containers:
        - name: {{ $v.component.name }}
          {{- include "svc-lib.containerCommon" . | nindent 10 }}
          command:
            {{- include "svc-lib.command" (dict "entry" $v.component.main) | nindent 12 }}
          ports:
            - name: http
              containerPort: {{ $v.ports.http }}
              protocol: TCP
            {{- if $v.ports.grpc }}
            - name: grpc
              containerPort: {{ $v.ports.grpc }}
              protocol: TCP
            {{- end }}
            - name: metrics
              containerPort: {{ $v.ports.metrics }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ $fullname }}-config
          {{- if or $v.secretEnv $v.extraEnv }}
          env:
            {{- with (include "svc-lib.secretEnv" . | trim) }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with $v.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- end }}
          startupProbe:
            {{- include "svc-lib.probe" (dict "probe" $v.probes.startup) | nindent 12 }}
          livenessProbe:
            {{- include "svc-lib.probe" (dict "probe" $v.probes.liveness) | nindent 12 }}
          readinessProbe:
            {{- include "svc-lib.probe" (dict "probe" $v.probes.readiness) | nindent 12 }}
          lifecycle:
            preStop:
              {{- if $v.preStop.useExec }}
              exec:
                command: ["sleep", {{ $v.preStop.sleepSeconds | toString | quote }}]
              {{- else }}
              sleep:
                seconds: {{ $v.preStop.sleepSeconds }}
              {{- end }}
          resources:
            {{- toYaml $v.resources | nindent 12 }}
{{- end -}}
