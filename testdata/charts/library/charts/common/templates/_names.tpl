{{- define "common.fullname" -}}
{{ .Release.Name }}-{{ .Values.name | default .Chart.Name }}
{{- end -}}
{{- define "common.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
