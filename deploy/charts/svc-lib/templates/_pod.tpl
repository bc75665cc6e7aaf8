{{/* Pod-level settings shared by the Deployment and the migration Job. */}}
{{- define "svc-lib.podCommon" -}}
{{- $v := .v -}}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $v.podSecurityContext | nindent 2 }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: tmp
    emptyDir:
      {{- with $v.tmpVolume.sizeLimit }}
      sizeLimit: {{ . }}
      {{- end }}
  {{- with $v.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* Container-level settings shared by the Deployment and the migration Job. */}}
{{- define "svc-lib.containerCommon" -}}
{{- $v := .v -}}
image: {{ include "svc-lib.image" . | quote }}
imagePullPolicy: {{ $v.image.pullPolicy }}
workingDir: {{ $v.workingDir }}
securityContext:
  {{- toYaml $v.securityContext | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  {{- with $v.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}
